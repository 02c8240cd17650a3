// ModelConfig: a decoder-only transformer's architecture as data. One forward pass serves every family
// (llama, qwen2, ...); each difference between families is a field here, never a branch on the name.
// Parsed from a Hugging Face config.json (from_hf_config) or built in code (tests, from-scratch training).
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::model {

enum class RopeScalingType { None, Llama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_max_position_embeddings = 8192;
};

struct ModelConfig {
  std::string architecture = "LlamaForCausalLM";  // as in config.json "architectures"[0]
  std::string model_type = "llama";
  int n_vocab = 0;
  int n_embd = 0;      // hidden_size
  int n_ff = 0;        // intermediate_size
  int n_layer = 0;     // num_hidden_layers
  int n_head = 0;      // num_attention_heads
  int n_head_kv = 0;   // num_key_value_heads
  int head_dim = 0;    // hidden_size / num_attention_heads unless given
  float norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;   // qwen2: biases on q/k/v projections
  bool o_bias = false;     // llama attention_bias=true: o_proj bias too
  bool mlp_bias = false;
  int max_position_embeddings = 4096;
  int bos_token_id = -1;
  std::vector<int> eos_token_ids;
  std::string torch_dtype = "float32";

  // Inverse RoPE frequencies (head_dim / 2 values), with rope scaling applied, rounded to fp32 as
  // Hugging Face computes them.
  std::vector<float> rope_inv_freq() const;
  Status validate() const;
  size_t n_params() const;
};

// Parses a Hugging Face config.json (text). Unknown architectures, missing or wrong-typed fields are
// errors naming the field.
Result<ModelConfig> config_from_hf_json(const std::string& text, const std::string& where = "config.json");
Result<ModelConfig> load_hf_config(const std::string& model_dir);
// Serialises to a Hugging Face config.json that transformers loads.
std::string config_to_hf_json(const ModelConfig& c);

}  // namespace gpstream::model
