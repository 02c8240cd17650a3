// The one table of tensor names: internal tensor ids ↔ Hugging Face names ↔ GGUF names, as data
// (tensor_names.cpp, kTensorNames) with "{L}" standing for the layer number. Loaders and writers never
// spell a tensor name inline. The GGUF architectures gpstream reads are a second table (kGgufArchs):
// to support a new family (gemma2, phi3, ...), add its rows to both tables and its fields to ModelConfig.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace gpstream::model {

enum class TensorId {
  TokEmbd, OutputNorm, Output,
  AttnNorm, AttnQ, AttnK, AttnV, AttnOut, AttnQBias, AttnKBias, AttnVBias, AttnOutBias,
  FfnNorm, FfnGate, FfnUp, FfnDown,
};

// Hugging Face name; `layer` is ignored for global tensors.
std::string hf_name(TensorId id, int layer = 0);
// GGUF name (llama.cpp's: token_embd.weight, blk.N.attn_q.weight, ...).
std::string gguf_name(TensorId id, int layer = 0);
// Inverse lookups: the id and layer (0 for global tensors) of a name, or nullopt.
std::optional<std::pair<TensorId, int>> tensor_id_from_hf(const std::string& name);
std::optional<std::pair<TensorId, int>> tensor_id_from_gguf(const std::string& name);

// A model family as GGUF names it (general.architecture, also the prefix of its hyperparameter keys).
struct GgufArch {
  const char* gguf;             // "llama", "qwen2"
  const char* hf_architecture;  // config.json "architectures"[0]
  const char* model_type;       // config.json "model_type"
  // llama.cpp's converter reorders the rows of attn_q / attn_k (weights and biases) within each head from
  // Hugging Face's rotate-half RoPE layout to interleaved pairs: GGUF row 2j + s of a head is HF row
  // j + s * head_dim / 2 (s = 0, 1). Reading undoes it, writing redoes it.
  bool interleaved_qk;
};
const GgufArch* gguf_arch_by_name(const std::string& gguf);
const GgufArch* gguf_arch_by_hf(const std::string& hf_architecture);

}  // namespace gpstream::model
