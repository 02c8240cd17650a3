// Trainable parameters as llm.c keeps them: one flat fp32 buffer with a table of named tensors (Hugging
// Face names, shapes, offsets, kind). Gradients and optimizer moments are flat buffers of the same size,
// indexed by the same offsets, so zero-grad is a fill and AdamW a flat loop. ModelLayout gives the
// offsets of every tensor of a decoder model (model_param_layout); LoRA adapters are a second ParamSet
// (lora.h). This module does not compute anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/flat_tensors.h"
#include "io/tensor.h"
#include "model/model_config.h"
#include "util/error.h"

namespace gpstream::train {

// Weight decay applies to Matrix tensors only (common practice: not to norms, biases, embeddings).
enum class ParamKind { Matrix, Embedding, Norm, Bias };

struct ParamTensor : io::FlatTensor {
  ParamKind kind = ParamKind::Matrix;
  float lr_scale = 1.0f;  // multiplies the learning rate of this tensor (parameter groups)
};

struct ParamSet {
  std::vector<ParamTensor> tensors;
  std::vector<float> values;

  // Appends a tensor (values grow, zero-filled); returns its offset.
  size_t add(std::string name, std::vector<int64_t> shape, ParamKind kind);
  size_t size() const { return values.size(); }
  const ParamTensor* find(const std::string& name) const;
  // Copies every tensor of `from` with the same name (any stored dtype); every tensor must be present
  // with the right shape unless `allow_missing`.
  Status load(const io::TensorMap& from, bool allow_missing = false);
  // The tensors as a TensorMap in `dtype` (F32 or BF16), names as in the table.
  io::TensorMap to_tensors(io::DType dtype) const;
};

constexpr size_t kNoParam = static_cast<size_t>(-1);

// Offsets of one block's tensors in the model ParamSet (kNoParam if the config has no such tensor).
struct LayerLayout {
  size_t attn_norm, wq, wk, wv, bq, bk, bv, wo, bo, ffn_norm, w_gate, w_up, w_down;
  size_t attn_post_norm, ffn_post_norm;  // Gemma 2 (sandwich_norms); kNoParam otherwise
};

struct ModelLayout {
  size_t tok_embd = 0;
  std::vector<LayerLayout> layers;
  size_t output_norm = 0;
  size_t output = 0;  // == tok_embd when tied
};

// Builds the parameter table of a decoder model (values zero) and its layout. Fused tensors (Phi-3) stay
// one tensor under their Hugging Face name; the layout points wq/wk/wv (w_gate/w_up) at its row blocks.
ParamSet model_param_set(const model::ModelConfig& config, ModelLayout& layout);

}  // namespace gpstream::train
