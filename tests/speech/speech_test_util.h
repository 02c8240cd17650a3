// Helpers for the speech tests: a tiny streaming LLM directory (random weights, the shipped model's real
// tokenizer.json so transcripts tokenize as in practice); the tiny encoder config is tiny_speech_model.h's.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../testing/tiny_speech_model.h"
#include "model/random_init.h"
#include "train/export.h"
#include "train/train_model.h"

namespace gpstream::testing {

inline std::string shipped_model_dir() {
  return std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";
}
inline std::string speech_sample_dir() {
  return std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/speech";
}

// tiny_models.h's Llama (tied, no rope scaling) with the shipped tokenizer's vocabulary and a wider MLP.
inline model::ModelConfig tiny_speech_llm_config() {
  model::ModelConfig c = tiny_config(false, /*tied=*/true, false);
  c.n_vocab = 8000;  // the shipped tokenizer's
  c.n_ff = 64;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return c;
}

// Writes a tiny random LLM as a streaming model directory (config.json, model.safetensors, tokenizer.json,
// gpstream.json with the default template).
inline void write_tiny_speech_llm(const std::string& dir, uint64_t seed = 3) {
  const model::ModelConfig c = tiny_speech_llm_config();
  model::RandomInitOptions ro;
  ro.seed = seed;
  ro.std = 0.1f;
  auto tm = train::TrainModel::create(c, model::random_tensors(c, ro), train::LoraOptions{}, 1,
                                      train::TrainShape{64, 64}, 1);
  ASSERT_TRUE(tm.ok()) << tm.error().message();
  train::HfExportOptions eo;
  eo.tokenizer_path = shipped_model_dir();
  eo.meta.source_lang = "en";
  eo.meta.target_lang = "en";
  const Status st = train::export_hf(**tm, dir, eo);
  ASSERT_TRUE(st.ok()) << st.error().message();
}

}  // namespace gpstream::testing
