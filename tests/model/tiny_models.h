// Tiny model configurations for tests (grouped-query attention, tied and untied, rope scaling on/off).
#pragma once

#include <memory>

#include "model/random_init.h"
#include "model/transformer.h"

namespace gpstream::testing {

inline model::ModelConfig tiny_config(bool qwen2, bool tied, bool llama3_rope) {
  model::ModelConfig c;
  c.architecture = qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
  c.model_type = qwen2 ? "qwen2" : "llama";
  c.qkv_bias = qwen2;
  c.n_vocab = 97;
  c.n_embd = 32;
  c.n_ff = 48;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 8;
  c.norm_eps = 1e-5f;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = tied;
  if (llama3_rope) {
    c.rope_scaling.type = model::RopeScalingType::Llama3;
    c.rope_scaling.factor = 8.0f;
    c.rope_scaling.low_freq_factor = 1.0f;
    c.rope_scaling.high_freq_factor = 4.0f;
    c.rope_scaling.original_max_position_embeddings = 16;
  }
  return c;
}

inline model::RandomInitOptions tiny_init(uint64_t seed, io::DType dtype = io::DType::F32) {
  model::RandomInitOptions o;
  o.seed = seed;
  o.std = 0.3f;
  o.norm_noise = 0.2f;
  o.bias_std = 0.1f;
  o.dtype = dtype;
  return o;
}

inline std::unique_ptr<model::Transformer> tiny_transformer(const model::ModelConfig& c, const io::TensorMap& t,
                                                            int threads = 1) {
  auto w = model::weights_from_tensors(c, t);
  GPS_ASSERT(w.ok(), "tiny model weights");
  return std::make_unique<model::Transformer>(c, std::move(w).value(), threads);
}

}  // namespace gpstream::testing
