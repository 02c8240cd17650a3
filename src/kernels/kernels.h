// CPU math for the transformer: the kernel layer. Kernels are free functions over raw pointers with
// explicit sizes (llm.c order: outputs first, then inputs, then sizes); they never allocate, log or throw.
// Dimension glossary used across gpstream:
//   n_tok     tokens in a batch            n_embd    hidden size
//   n_head    query heads                  n_head_kv key/value heads (grouped-query attention)
//   head_dim  size of one head             n_ff      feed-forward (MLP) inner size
//   n_vocab   vocabulary size              n_layer   transformer blocks
// Activations are fp32, row-major [n_tok, width]. Weights may be F32, F16 or BF16 ([out, in], as
// Hugging Face stores nn.Linear weights) and are converted per tile inside the kernels.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpstream::kernels {

enum class WeightType { F32, F16, BF16 };

// A read-only row-major weight matrix [rows, cols] in its stored precision.
struct MatrixView {
  WeightType type = WeightType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  // Bytes per element.
  size_t elem_size() const { return type == WeightType::F32 ? 4 : 2; }
  const void* row(int64_t r) const {
    return static_cast<const char*>(data) + static_cast<size_t>(r) * static_cast<size_t>(cols) * elem_size();
  }
};

}  // namespace gpstream::kernels
