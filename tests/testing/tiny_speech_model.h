// A tiny random speech model directory for tests (docs/speech.md, speech/speech_model.h): a llama-style LLM
// with random weights (config.json, model.safetensors, gpstream.json, the small trained BPE tokenizer of
// tests/tokenizer/data/trained) and a random streaming speech encoder whose projector writes rows of the
// LLM's width (speech_encoder.safetensors). Chunks of 4 encoder frames (160 ms, 16 log-mel frames) of 2 rows
// each.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "../model/tiny_models.h"
#include "io/safetensors.h"
#include "model/model_config.h"
#include "model/random_init.h"
#include "speech_encoder/speech_encoder_params.h"
#include "stream/model_meta.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace gpstream::testing {

struct TinySpeechModelOptions {
  uint64_t llm_seed = 1;
  uint64_t encoder_seed = 2;
  int k = 2;                 // gpstream.json's wait-k (chunks)
  int64_t chunk_frames = 4;  // encoder frames per chunk (40 ms each)
  int64_t stack = 2;
};

inline speech_encoder::SpeechEncoderConfig tiny_speech_encoder_config(int64_t llm_hidden,
                                                                      int64_t chunk_frames = 4,
                                                                      int64_t stack = 2) {
  speech_encoder::SpeechEncoderConfig c;
  c.conv_channels = 16;
  c.d_model = 16;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_ff = 24;
  c.chunk_frames = chunk_frames;
  c.stack = stack;
  c.proj_hidden = 24;
  c.llm_hidden = llm_hidden;
  return c;
}

inline Status write_tiny_speech_model(const std::string& dir, const TinySpeechModelOptions& o = {}) {
  namespace fs = std::filesystem;
  const std::string tok_dir = std::string(GPSTREAM_SOURCE_DIR) + "/tests/tokenizer/data/trained";
  fs::create_directories(dir);
  model::ModelConfig c = tiny_config(false, true, false);
  c.n_vocab = 1000;  // the trained tokenizer's vocabulary
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  GPS_TRY(c.validate());
  model::RandomInitOptions ro = tiny_init(o.llm_seed);
  const io::TensorMap t = model::random_tensors(c, ro);
  std::vector<io::TensorToWrite> w;
  for (const auto& [name, data] : t.tensors) w.push_back({name, data});
  GPS_TRY(io::write_safetensors(dir + "/model.safetensors", w, {{"format", "pt"}}));
  const std::string cfg = model::config_to_hf_json(c);
  GPS_TRY(write_file_atomic(dir + "/config.json", std::as_bytes(std::span(cfg))));
  stream::ModelMeta meta;
  meta.k = o.k;
  const std::string meta_json = meta.to_json();
  GPS_TRY(write_file_atomic(dir + "/gpstream.json", std::as_bytes(std::span(meta_json))));
  std::error_code ec;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(tok_dir + "/" + f, dir + "/" + f, fs::copy_options::overwrite_existing, ec);
  if (ec) return io_error("copying the tokenizer: " + ec.message());
  speech_encoder::SpeechEncoderModel enc(tiny_speech_encoder_config(c.n_embd, o.chunk_frames, o.stack));
  enc.init_random(o.encoder_seed);
  return enc.save(dir + "/speech_encoder.safetensors");
}

}  // namespace gpstream::testing
