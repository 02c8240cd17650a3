// Storage precision of a whole model: converts Hugging Face-named tensors to F32 / F16 / BF16 or to GGUF's
// Q8_0 / Q4_0 blocks, the policy `gpstream convert --type` uses. 1-D tensors (norms, biases) stay F32.
// Q8_0: every matrix whose rows are whole 32-weight blocks. Q4_0: the same, except the embedding and output
// matrices, which are Q8_0 (llama.cpp keeps them at a higher precision too). Matrices whose rows are not
// whole blocks stay F32.
#pragma once

#include <string>

#include "io/tensor.h"
#include "model/model_config.h"

namespace gpstream::model {

Result<io::DType> parse_storage_type(const std::string& name);  // "f32", "f16", "bf16", "q8_0", "q4_0"
// llama.cpp's general.file_type for a storage type (0, 1, 32, 7, 2).
int gguf_file_type(io::DType t);
io::TensorMap convert_model_tensors(const ModelConfig& config, const io::TensorMap& hf, io::DType target);

}  // namespace gpstream::model
