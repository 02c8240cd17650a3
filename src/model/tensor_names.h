// The one table of tensor names: internal tensor ids ↔ Hugging Face names (and GGUF names once GGUF
// support lands). Loaders and writers never spell a tensor name inline.
// Families differ in two ways: Gemma 2 has four norms per block (its post_attention_layernorm is the norm
// on the attention OUTPUT, and pre_feedforward_layernorm is what llama calls post_attention_layernorm),
// and Phi-3 stores q/k/v and gate/up fused (AttnQkv = [q; k; v] rows, FfnGateUp = [gate; up] rows).
#pragma once

#include <string>

#include "model/model_config.h"

namespace gpstream::model {

enum class TensorId {
  TokEmbd, OutputNorm, Output,
  AttnNorm, AttnQ, AttnK, AttnV, AttnOut, AttnQBias, AttnKBias, AttnVBias, AttnOutBias,
  FfnNorm, FfnGate, FfnUp, FfnDown,
  AttnPostNorm, FfnPostNorm,  // Gemma 2 (sandwich_norms)
  AttnQkv, FfnGateUp,         // Phi-3 (fused_qkv, fused_gate_up)
};

// Hugging Face name in the llama layout; `layer` is ignored for global tensors.
std::string hf_name(TensorId id, int layer = 0);
// Hugging Face name in the layout of config's family.
std::string hf_name(const ModelConfig& config, TensorId id, int layer = 0);

}  // namespace gpstream::model
