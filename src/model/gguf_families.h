// The GGUF specifics of the Gemma 2 (`gemma2`) and Phi-3 (`phi3`) families, as llama.cpp's converter writes
// them (docs/models.md, "GGUF names"; docs/gguf.md): their {arch}.* metadata keys in both directions, Phi-3's
// longrope factor tensors, and "llama.cpp form", the equivalent model llama.cpp computes:
//  - Gemma 2's norms hold 1 + w (llama.cpp multiplies by the stored weight; norm_weight_offset 0), and
//    llama.cpp's query scale is fixed (head_dim^-1/2, or (hidden / heads)^-1/2 for 46 layers), so a different
//    query_pre_attn_scalar is folded into attn_q (RoPE is linear: q·s rotates to the rotated q times s).
//  - Gemma 2 always uses token_embd as the output matrix.
// llama / qwen2 have no specifics here. gguf_model.cpp does the common part and calls these.
#pragma once

#include <string>
#include <vector>

#include "io/gguf.h"
#include "io/tensor.h"
#include "model/model_config.h"
#include "model/tensor_names.h"

namespace gpstream::model {

// GGUF tensors that are not weights but hyperparameters (Phi-3's longrope factors): read by
// read_gguf_family_config, skipped by the tensor loader.
bool is_gguf_parameter_tensor(const std::string& gguf_name);

// Fills c's family fields from the {arch}.* keys and parameter tensors; c's common fields (sizes, head_dim,
// eps, theta, context length, tying) are already set. `rope_dims` is {arch}.rope.dimension_count (head_dim
// when absent). Errors name the key or tensor.
Status read_gguf_family_config(const io::GgufFile& g, const GgufArch& arch, int rope_dims, ModelConfig& c);

// The {arch}.* keys of c's family (beyond the common ones) and gpstream's own keys. c must be in llama.cpp
// form (to_llamacpp_form); anything llama.cpp cannot represent is an error naming the field.
Status write_gguf_family_metadata(const ModelConfig& c, const GgufArch& arch, io::GgufMetadata& m);

// Parameter tensors to write (Phi-3 longrope: rope_factors_long / rope_factors_short, F32), owned by
// `storage`.
std::vector<io::GgufTensorToWrite> gguf_family_parameter_tensors(const ModelConfig& c,
                                                                 io::TensorMap& storage);

// A model with Hugging Face semantics → the same model in llama.cpp form (Gemma 2: norms 1 + w as F32,
// query_pre_attn_scalar folded into attn_q as F32, lm_head dropped when it equals the embedding; others
// unchanged). Tensors not changed stay views into `hf`.
struct ModelForm {
  ModelConfig config;
  io::TensorMap tensors;
};
Result<ModelForm> to_llamacpp_form(const ModelConfig& c, const io::TensorMap& hf);

// The inverse where Hugging Face's format needs it (Gemma 2 norms back to w, as F32, norm_weight_offset 1).
ModelForm to_hf_form(const ModelConfig& c, const io::TensorMap& tensors);

}  // namespace gpstream::model
