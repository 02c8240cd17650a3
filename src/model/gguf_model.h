// Models in GGUF files: hyperparameters from the {arch}.* metadata keys (llama, qwen2, gemma2, phi3; the
// family-specific ones in gguf_families.h), tensors by GGUF
// names (tensor_names.h), llama's interleaved Q/K row order undone, Q4_K / Q6_K dequantized to F32 at load
// (Q8_0 / Q4_0 and the float types stay as stored, viewed in the mapped file). The other direction builds
// the metadata and tensor list that llama.cpp reads for a ModelConfig and Hugging Face-named tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/gguf.h"
#include "io/tensor.h"
#include "model/model_config.h"

namespace gpstream::model {

// True for a path naming a .gguf file (by extension).
bool is_gguf_path(const std::string& path);

// ModelConfig from GGUF metadata (and tensor presence: output.weight absent = tied embeddings, attention
// biases). Errors name the key.
Result<ModelConfig> config_from_gguf(const io::GgufFile& g);

// The file's tensors under Hugging Face names, ready for weights_from_tensors: Q/K rows of interleaved-RoPE
// architectures reordered, Q4_K / Q6_K dequantized to F32. Unknown tensor names are errors. The map keeps
// the file mapping alive.
Result<io::TensorMap> hf_tensors_from_gguf(const io::GgufFile& g, const ModelConfig& config);

// Metadata keys for a model (general.*, {arch}.*); the tokenizer keys come from the tokenizer layer. The
// model must be in llama.cpp form (gguf_families.h, to_llamacpp_form: matters for gemma2). `file_type` is
// llama.cpp's general.file_type (0 all F32, 1 mostly F16, 2 mostly Q4_0, 7 mostly Q8_0, 32 mostly BF16).
Result<io::GgufMetadata> gguf_metadata_for(const ModelConfig& config, const std::string& name, int file_type);

// Hugging Face-named tensors → GGUF tensors in llama.cpp's order (token_embd, blocks, output_norm,
// output), renamed, with Q/K rows interleaved for llama. Permuted copies are owned by `storage`; the
// others are views into `hf`. Tied models get no output.weight.
Result<std::vector<io::GgufTensorToWrite>> gguf_tensors_from_hf(const ModelConfig& config,
                                                                const io::TensorMap& hf,
                                                                io::TensorMap& storage);

// Any tensor (plain or block-quantized) as fp32.
std::vector<float> dequantize_tensor(const io::TensorData& t);

}  // namespace gpstream::model
