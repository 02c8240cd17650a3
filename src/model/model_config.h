// ModelConfig: a decoder-only transformer's architecture as data. One forward pass serves every family
// (llama, qwen2, gemma2, phi3); each difference between families is a field here, never a branch on the
// name (docs/models.md lists what each family sets).
// Parsed from a Hugging Face config.json (from_hf_config) or built in code (tests, from-scratch training).
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::model {

enum class RopeScalingType { None, Llama3, LongRope };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_max_position_embeddings = 8192;
  // longrope (Phi-3): per-frequency divisors (rope_dim / 2 each) for positions inside / past the original
  // context, and the factor multiplying cos and sin.
  std::vector<float> short_factor, long_factor;
  float attention_factor = 1.0f;
};

enum class HiddenAct { Silu, GeluTanh };

struct ModelConfig {
  std::string architecture = "LlamaForCausalLM";  // as in config.json "architectures"[0]
  std::string model_type = "llama";
  int n_vocab = 0;
  int n_embd = 0;     // hidden_size
  int n_ff = 0;       // intermediate_size
  int n_layer = 0;    // num_hidden_layers
  int n_head = 0;     // num_attention_heads
  int n_head_kv = 0;  // num_key_value_heads
  int head_dim = 0;   // hidden_size / num_attention_heads unless given
  float norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // qwen2: biases on q/k/v projections
  bool o_bias = false;    // llama attention_bias=true: o_proj bias too
  bool mlp_bias = false;
  int max_position_embeddings = 4096;
  // Family features (defaults: llama).
  HiddenAct hidden_act = HiddenAct::Silu;
  float embed_scale = 1.0f;         // token embeddings are multiplied by this (Gemma: sqrt(hidden), rounded)
  float norm_weight_offset = 0.0f;  // RMSNorm multiplies by (offset + weight): Gemma 1
  bool sandwich_norms = false;      // Gemma 2: extra norms on the attention and MLP outputs
  float query_pre_attn_scalar = 0;  // attention scale = scalar^-0.5 (Gemma 2); 0: head_dim^-0.5
  float attn_softcap = 0.0f;        // scores → cap·tanh(scores/cap); 0: none
  float final_softcap = 0.0f;       // logits → cap·tanh(logits/cap); 0: none
  int sliding_window = 0;  // keys per group a query sees (docs/models.md, sliding windows); 0: unlimited
  int sliding_window_every = 1;        // layer il slides iff il % every == 0 (Gemma 2: 2; Phi-3: 1)
  float partial_rotary_factor = 1.0f;  // rotated share of each head (rope_dim = head_dim · factor)
  bool fused_qkv = false;              // Phi-3: q, k, v stored as one qkv_proj [Q + 2 KV, E]
  bool fused_gate_up = false;          // Phi-3: gate and up stored as one gate_up_proj [2 F, E]
  int bos_token_id = -1;
  std::vector<int> eos_token_ids;
  std::string torch_dtype = "float32";

  // Inverse RoPE frequencies (rope_dim / 2 values), with rope scaling applied, rounded to fp32 as
  // Hugging Face computes them. For longrope: the short factors; rope_inv_freq_long() the long ones.
  std::vector<float> rope_inv_freq() const;
  std::vector<float> rope_inv_freq_long() const;
  int rope_dim() const;
  float attention_scale() const;
  bool layer_slides(int layer) const { return sliding_window > 0 && layer % sliding_window_every == 0; }
  Status validate() const;
  size_t n_params() const;
};

// Deepest JSON nesting accepted in config.json (real ones nest 3 levels): nothing walks a deeper value.
inline constexpr int kMaxConfigJsonDepth = 64;

// Parses a Hugging Face config.json (text). Unknown architectures, missing or wrong-typed fields are
// errors naming the field.
Result<ModelConfig> config_from_hf_json(const std::string& text, const std::string& where = "config.json");
Result<ModelConfig> load_hf_config(const std::string& model_dir);
// Serialises to a Hugging Face config.json that transformers loads.
std::string config_to_hf_json(const ModelConfig& c);

}  // namespace gpstream::model
