// The one table of tensor names: internal tensor ids ↔ Hugging Face names ↔ GGUF names, as data
// (tensor_names.cpp, kTensorNames) with "{L}" standing for the layer number. Loaders and writers never
// spell a tensor name inline. The GGUF architectures gpstream reads are a second table (kGgufArchs):
// to support a new family, add its rows to both tables and its fields to ModelConfig (gguf_families.h holds
// the family-specific metadata keys). Families differ in two ways: Gemma 2 has four norms per block (its
// post_attention_layernorm is the norm on the attention OUTPUT, and pre_feedforward_layernorm is what llama
// calls post_attention_layernorm), and Phi-3 stores q/k/v and gate/up fused (AttnQkv = [q; k; v] rows,
// FfnGateUp = [gate; up] rows).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "model/model_config.h"

namespace gpstream::model {

enum class TensorId {
  TokEmbd,
  OutputNorm,
  Output,
  AttnNorm,
  AttnQ,
  AttnK,
  AttnV,
  AttnOut,
  AttnQBias,
  AttnKBias,
  AttnVBias,
  AttnOutBias,
  FfnNorm,
  FfnGate,
  FfnUp,
  FfnDown,
  AttnPostNorm,
  FfnPostNorm,  // Gemma 2 (sandwich_norms)
  AttnQkv,
  FfnGateUp,  // Phi-3 (fused_qkv, fused_gate_up)
};

// Hugging Face name in the llama layout; `layer` is ignored for global tensors.
std::string hf_name(TensorId id, int layer = 0);
// Hugging Face name in the layout of config's family.
std::string hf_name(const ModelConfig& config, TensorId id, int layer = 0);
// GGUF name (llama.cpp's: token_embd.weight, blk.N.attn_q.weight, ...).
std::string gguf_name(TensorId id, int layer = 0);
// Inverse lookups: the id and layer (0 for global tensors) of a name, or nullopt.
std::optional<std::pair<TensorId, int>> tensor_id_from_hf(const std::string& name);
std::optional<std::pair<TensorId, int>> tensor_id_from_gguf(const std::string& name);
// The id of a Hugging Face name in config's family (Gemma 2: post_attention_layernorm is AttnPostNorm,
// pre_feedforward_layernorm FfnNorm).
std::optional<std::pair<TensorId, int>> tensor_id_from_hf(const ModelConfig& config, const std::string& name);
// The id a GGUF name means in config's family (Phi-3's blk.N.ffn_up is the fused FfnGateUp).
TensorId family_tensor_id(const ModelConfig& config, TensorId id);
// Whether a model of config's family and options has this tensor (fused or split projections, biases,
// sandwich norms, an untied output).
bool tensor_in_family(const ModelConfig& config, TensorId id);

// A model family as GGUF names it (general.architecture, also the prefix of its hyperparameter keys).
struct GgufArch {
  const char* gguf;             // "llama", "qwen2", "gemma2", "phi3"
  const char* hf_architecture;  // config.json "architectures"[0]
  const char* model_type;       // config.json "model_type"
  // llama.cpp's converter reorders the rows of attn_q / attn_k (weights and biases) within each head from
  // Hugging Face's rotate-half RoPE layout to interleaved pairs: GGUF row 2j + s of a head is HF row
  // j + s * head_dim / 2 (s = 0, 1). Reading undoes it, writing redoes it.
  bool interleaved_qk;
};
const GgufArch* gguf_arch_by_name(const std::string& gguf);
const GgufArch* gguf_arch_by_hf(const std::string& hf_architecture);
// "llama, qwen2, gemma2, phi3": for error messages.
std::string gguf_arch_names();

}  // namespace gpstream::model
