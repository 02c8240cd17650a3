// The settings a user gives over a model's own (its gpstream.json): paradigm, wait-k, φ, policy and its
// parameters, decoding, sentence ends. The command line and the Python package both take them, and both turn
// them into SessionOptions through session_options() below, so every front end checks and combines them
// alike.
#pragma once

#include <string>
#include <vector>

#include "stream/sentence_ends.h"
#include "stream/session.h"
#include "stream/streaming_model.h"

namespace gpstream::stream {

// The ranges of the settings below, checked by session_options() and by the command line's parser alike.
inline constexpr int kMaxTokensLimit = 1 << 16;    // max_tokens: 1 to this
inline constexpr int kMaxBeam = 1024;              // beam: 1 to this (0: the model's)
inline constexpr double kMaxSentenceEndBias = 50;  // |sentence_end_bias| at most this
inline constexpr double kMaxTemperature = 100;     // temperature: 0 to this
inline constexpr int kMaxTopK = 1 << 24;           // top_k: 0 to this
inline constexpr double kMinRepetitionPenalty = 0.01, kMaxRepetitionPenalty = 100;

struct SessionSettings {
  std::string paradigm;            // "" = the model's
  int k = 0;                       // wait-k's lag; 0 = the model's
  std::string phi;                 // "" = the model's, else a number >= 0 or "S"
  std::string end_after_source;    // "" = the model's, else "on" or "off"
  int max_tokens = 256;            // target tokens per sentence
  int beam = 0;                    // 0 = the model's
  std::string policy;              // "" = the model's, else a parse_policy_name name
  double tau = -1;                 // confidence: < 0 = the model's
  int min_lag = -1, max_lag = -1;  // confidence, local-agreement, alignatt: < 0 = the model's
  int frames = 0;                  // alignatt: 0 = the model's
  int agreement = 0;               // local-agreement: 0 = the model's
  std::vector<int> layers;         // alignatt: empty = the model's
  // Continuous text: "model" (sentence ends of unpunctuated text decided by the model, the default) or
  // "punctuation" (only punctuation and the word limit).
  std::string sentence_ends = "model";
  double sentence_end_bias = kDefaultSentenceEndBias;
  std::string sentence_end_lookahead = "on";  // "on" or "off": SessionOptions::sentence_end_lookahead
  float temperature = 0, top_p = 1, repetition_penalty = 1;
  int top_k = 0;
  uint64_t seed = 0;
};

// The model's defaults with `s` over them. Errors (invalid_argument, naming the command line's option) for
// values out of range and for settings that do not go together: a policy parameter of another policy, -k
// with an adaptive policy, a policy the paradigm does not run, a beam or local-agreement with sampling.
Result<SessionOptions> session_options(const StreamingModel& m, const SessionSettings& s);

}  // namespace gpstream::stream
