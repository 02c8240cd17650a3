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

// Gemma 2 features: head_dim independent of hidden / heads, (1 + w) norms, sandwich norms, tanh-GELU,
// embedding scale, query_pre_attn_scalar, soft-caps that bend O(1) scores, a window of `window` rows per
// group on even layers (3 layers: 0 and 2 slide).
inline model::ModelConfig tiny_gemma2_config(int window = 3) {
  model::ModelConfig c = tiny_config(false, true, false);
  c.architecture = "Gemma2ForCausalLM";
  c.model_type = "gemma2";
  c.n_embd = 24;
  c.n_layer = 3;
  c.head_dim = 8;  // 4 heads × 8 = 32 ≠ 24
  c.hidden_act = model::HiddenAct::GeluTanh;
  c.embed_scale = 4.898979485566356f;  // sqrt(24)
  c.norm_weight_offset = 1.0f;
  c.sandwich_norms = true;
  c.query_pre_attn_scalar = 12.0f;
  c.attn_softcap = 1.5f;
  c.final_softcap = 2.5f;
  c.sliding_window = window;
  c.sliding_window_every = 2;
  return c;
}

// Phi-3 features: fused qkv / gate_up, partial rotary (6 of 8 dims), longrope with a small original
// context (positions p with p + 1 > 16 use the long factors), a window of `window` rows per group on every
// layer.
inline model::ModelConfig tiny_phi3_config(int window = 3) {
  model::ModelConfig c = tiny_config(false, false, false);
  c.architecture = "Phi3ForCausalLM";
  c.model_type = "phi3";
  c.fused_qkv = c.fused_gate_up = true;
  c.partial_rotary_factor = 0.75f;
  c.rope_scaling.type = model::RopeScalingType::LongRope;
  c.rope_scaling.short_factor = {1.0f, 1.5f, 2.5f};
  c.rope_scaling.long_factor = {1.3f, 4.0f, 9.0f};
  c.rope_scaling.original_max_position_embeddings = 16;
  c.rope_scaling.attention_factor = 1.2f;
  c.sliding_window = window;
  c.sliding_window_every = 1;
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

inline std::unique_ptr<model::Transformer> tiny_transformer(const model::ModelConfig& c,
                                                            const io::TensorMap& t, int threads = 1) {
  auto w = model::weights_from_tensors(c, t);
  GPS_ASSERT(w.ok(), "tiny model weights");
  return std::make_unique<model::Transformer>(c, std::move(w).value(), threads);
}

}  // namespace gpstream::testing
