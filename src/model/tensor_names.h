// The one table of tensor names: internal tensor ids ↔ Hugging Face names (and GGUF names once GGUF
// support lands). Loaders and writers never spell a tensor name inline.
#pragma once

#include <string>

namespace gpstream::model {

enum class TensorId {
  TokEmbd, OutputNorm, Output,
  AttnNorm, AttnQ, AttnK, AttnV, AttnOut, AttnQBias, AttnKBias, AttnVBias, AttnOutBias,
  FfnNorm, FfnGate, FfnUp, FfnDown,
};

// Hugging Face name; `layer` is ignored for global tensors.
std::string hf_name(TensorId id, int layer = 0);

}  // namespace gpstream::model
