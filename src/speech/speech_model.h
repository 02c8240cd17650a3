// A speech recognition model: a streaming LLM directory (config.json, model.safetensors, tokenizer.json,
// gpstream.json — stream/streaming_model.h) with `speech_encoder.safetensors` beside it, the streaming speech
// encoder whose projector writes rows in the LLM's embedding space (speech_encoder/speech_encoder_params.h).
// Audio chunks of the encoder (chunk_frames × 40 ms) are the source units of the LLM's Session; wait-k counts
// them.
#pragma once

#include <memory>
#include <string>

#include "speech_encoder/speech_encoder_params.h"
#include "stream/streaming_model.h"

namespace gpstream::speech {

inline constexpr const char* kSpeechEncoderFile = "speech_encoder.safetensors";

// True when `dir` holds a speech encoder file (the rest is checked by load).
bool is_speech_model_dir(const std::string& dir);

struct SpeechModel {
  stream::StreamingModel llm;
  std::unique_ptr<speech_encoder::SpeechEncoderModel> encoder;

  // Errors: either part missing or invalid, or an encoder whose llm_hidden differs from the LLM's n_embd.
  static Result<SpeechModel> load(const std::string& dir, int n_threads = 0);
  // Audio per source unit (one encoder chunk), in ms.
  double chunk_ms() const;
};

}  // namespace gpstream::speech
