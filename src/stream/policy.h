// Read/write policies. A Policy looks at a stream's state and says READ (take one more source unit) or
// WRITE (produce target text); it holds no stream state, so one policy object serves many sessions.
// wait-k (Ma et al., 2019) lags a fixed number of units; `confidence` is adaptive: it writes once the
// model is sure enough of what it is about to write, within a lag range; `local-agreement` (LocalAgreement-n,
// as in whisper_streaming, which uses n = 2) writes the words on which the model's continuations after n
// successive reads agree; `alignatt` (as in SimulStreaming) writes unless the model's attention is on the
// newest input (docs/streaming.md, "Policies").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::stream {

enum class Action { Read, Write };

struct PolicyState {
  // A constructor rather than an aggregate, so that states written as {units, words, finished, M, end}
  // leave the confidence out without a missing-initializer warning.
  PolicyState(int units_read_ = 0, int words_written_ = 0, bool source_finished_ = false, int n_words_ = 0,
              int end_chosen_at_ = -1, std::optional<double> confidence_ = std::nullopt)
      : units_read(units_read_),
        words_written(words_written_),
        source_finished(source_finished_),
        n_words(n_words_),
        end_chosen_at(end_chosen_at_),
        confidence(confidence_) {}
  int units_read = 0;     // source units in the cache (words, then the end marker as unit M+1)
  int words_written = 0;  // target words emitted so far
  bool source_finished = false;
  int n_words = 0;  // source words known so far (= M once source_finished)
  // The decision is for the target end marker: the model chose EOS with this many units read (collect
  // reads advances units_read, not this); -1: for a word.
  int end_chosen_at = -1;
  // Adaptive policies: the model's probability of what the session is about to commit here (the next
  // word's first token, or its whole word with word beam search, or the end marker), from the logits row
  // in hand. Empty where no row has seen the units read: at the start, and after each read.
  std::optional<double> confidence;
  // local-agreement: the session's tentative continuation (decoded greedily after the last read, then
  // dropped again), beyond the words written: `agreed` of its words agree with the continuations of the
  // previous PolicySpec::agreement − 1 reads, `available` words it has in all (0: it ended, or hit a bound,
  // right there). Empty where no continuation has seen the units read: at the start, and after each read.
  struct Agreement {
    int agreed = 0;
    int available = 0;
  };
  std::optional<Agreement> agreement;
  // alignatt: the source unit (counted as units_read is) on which the attention of the row in hand peaks:
  // the argmax over the segment's source rows of that row's attention probabilities summed over the chosen
  // layers and all their heads (prompt rows excluded; -1 when no unit row was read). Empty where no row has
  // seen the units read: at the start, and after each read.
  std::optional<int> attended_unit;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Action decide(const PolicyState& s) const = 0;
  // An adaptive policy reads one unit at a time beyond its minimum and decides again on fresh logits; its
  // sessions decide at every word start (after the header and after each re-feed too) and fill
  // PolicyState::confidence there.
  virtual bool adaptive() const { return false; }
  // The session decodes a tentative continuation at each word start after a read and fills
  // PolicyState::agreement (LocalAgreementPolicy).
  virtual bool local_agreement() const { return false; }
  // The session taps the attention of each row it decides on and fills PolicyState::attended_unit
  // (AlignAttPolicy).
  virtual bool reads_attention() const { return false; }
};

// wait-k: target word j is written after min(k + j − 1, M + 1) units (gpe.md §4), the end marker after
// min(k + N, M + 1) — or, with end_after_source, only after all M + 1 (a transcript ends with the audio:
// with audio chunks as units, N words and M chunks are on different scales, and k + N < M + 1 lets the model
// end before it has heard the last words). Then every end marker chosen early reads one more unit and lets
// the model decide again, so a model that goes on writing does so with wait-k's lag, not the whole rest.
class WaitKPolicy final : public Policy {
 public:
  explicit WaitKPolicy(int k, bool end_after_source = false) : k_(k), end_after_source_(end_after_source) {}
  Action decide(const PolicyState& s) const override;
  int k() const { return k_; }

 private:
  int k_;
  bool end_after_source_;
};

// Reads the whole source (with its end marker) before writing: offline translation.
class ReadAllPolicy final : public Policy {
 public:
  Action decide(const PolicyState& s) const override;
};

// confidence: with lag = units read − words written, read while lag < min_lag (a unit being there); write
// once lag ≥ max_lag; in between write when the model's probability of what it is about to commit
// (PolicyState::confidence) is at least tau, else read one unit and decide again with the new logits. With
// everything read (the end marker included) it writes. With end_after_source, an end marker chosen before
// the whole source is read reads one more unit first, as under wait-k.
class ConfidencePolicy final : public Policy {
 public:
  ConfidencePolicy(double tau, int min_lag, int max_lag, bool end_after_source = false)
      : tau_(tau), min_lag_(min_lag), max_lag_(max_lag), end_after_source_(end_after_source) {}
  Action decide(const PolicyState& s) const override;
  bool adaptive() const override { return true; }

 private:
  double tau_;
  int min_lag_, max_lag_;
  bool end_after_source_;
};

// local-agreement (LocalAgreement-n): with lag = units read − words written, read while lag < min_lag
// (a unit being there); with no continuation on the units read, write (the session decodes one, greedily,
// and compares it with those of the previous n − 1 reads: PolicyState::agreement); then write while words
// of the continuation agree with those, or while lag ≥ max_lag and the continuation has words; else read
// one unit. With everything read (the end marker included) it writes: the rest is decoded as usual. The end
// marker is never written before that, so end_after_source changes nothing.
class LocalAgreementPolicy final : public Policy {
 public:
  LocalAgreementPolicy(int min_lag, int max_lag) : min_lag_(min_lag), max_lag_(max_lag) {}
  Action decide(const PolicyState& s) const override;
  bool adaptive() const override { return true; }
  bool local_agreement() const override { return true; }

 private:
  int min_lag_, max_lag_;
};

// alignatt (AlignAtt, Papi et al. 2023): with lag = units read − words written, read while lag < min_lag
// (a unit being there); write once lag ≥ max_lag; in between write unless the attention of the row in
// hand peaks on one of the last `frames` units read (PolicyState::attended_unit): then the model is still
// looking at the newest input, so read one unit and decide again with the new row. With everything read
// (the end marker included) it writes; end_after_source as in ConfidencePolicy.
class AlignAttPolicy final : public Policy {
 public:
  AlignAttPolicy(int frames, int min_lag, int max_lag, bool end_after_source = false)
      : frames_(frames), min_lag_(min_lag), max_lag_(max_lag), end_after_source_(end_after_source) {}
  Action decide(const PolicyState& s) const override;
  bool adaptive() const override { return true; }
  bool reads_attention() const override { return true; }

 private:
  int frames_;
  int min_lag_, max_lag_;
  bool end_after_source_;
};

enum class PolicyKind { WaitK, Confidence, LocalAgreement, AlignAtt };

// Which read/write policy a session runs and its settings (wait-k's k is SessionOptions::k). Defaults:
// tau 0.5, lags 1..8 (wait-k's default k is 5, in the middle of that range), frames 1, every layer.
// local-agreement and alignatt use the lags (local-agreement's max_lag also bounds its tentative
// continuations, in words); only confidence uses tau, only alignatt frames and layers.
struct PolicySpec {
  PolicyKind kind = PolicyKind::WaitK;
  double tau = 0.5;  // confidence: write when the probability is at least this, in [0, 1]
  int min_lag =
      1;  // confidence, local-agreement, alignatt: below this lag always read, in [0, kMaxPolicyLag]
  int max_lag = 8;  // ...: at or above this lag always write, in [max(min_lag, 1), kMaxPolicyLag]
  int frames = 1;   // alignatt: read while the attention peaks on one of the last `frames` units read, ≥ 1
  // local-agreement: a word is agreed when the continuations of this many successive reads begin with it,
  // in [2, kMaxPolicyAgreement] (LocalAgreement-2 as in whisper_streaming by default)
  int agreement = 2;
  std::vector<int> layers = {};  // alignatt: the layers whose heads' attention is summed (empty: every layer)
  bool operator==(const PolicySpec&) const = default;
};

inline constexpr int kMaxPolicyLag = 1000000;   // as wait-k's k
inline constexpr int kMaxPolicyLayers = 4096;   // alignatt: layer indexes and their count, below this
inline constexpr int kMaxPolicyAgreement = 16;  // local-agreement: continuations compared, at most

// "wait-k", "confidence", "local-agreement" or "alignatt"
std::optional<PolicyKind> parse_policy_name(std::string_view name);
const char* policy_name(PolicyKind kind);
std::string policy_names();  // "wait-k, confidence, local-agreement, alignatt", for messages
// An error naming the first setting out of range (tau outside [0, 1], a negative min_lag, max_lag < 1 or
// below min_lag, a lag above kMaxPolicyLag, frames < 1 or above it, a negative or repeated layer, an
// agreement outside [2, kMaxPolicyAgreement]).
Status validate_policy(const PolicySpec& spec);
// The policy of a spec (validated first): wait-k with k, confidence, local-agreement or alignatt;
// end_after_source as in WaitKPolicy.
Result<std::unique_ptr<Policy>> make_policy(const PolicySpec& spec, int k, bool end_after_source);

// How one setting of a policy is named, for run folders, tables, plots and JSON records, so that every
// command names a setting the same way: wait-k "5" (its k), confidence "0.5" (tau), local-agreement "1-8"
// (its lags; "1-8-agree3" with an agreement other than 2), alignatt "2" (frames).
std::string policy_setting(const PolicySpec& spec, int k);
// The setting's name in a figure: "k=5", "tau=0.5", "lag=1-8", "f=2".
std::string policy_setting_label(const PolicySpec& spec, int k);
// The suffix of a run folder after the paradigm: "-k5", "-confidence-tau0.5", "-local-agreement-lag1-8",
// "-alignatt-f2".
std::string policy_folder_suffix(const PolicySpec& spec, int k);

}  // namespace gpstream::stream
