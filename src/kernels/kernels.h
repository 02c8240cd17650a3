// CPU math for the transformer: the kernel layer. Kernels are free functions over raw pointers with
// explicit sizes (llm.c order: outputs first, then inputs, then sizes); they never allocate, log or throw.
// Dimension glossary used across gpstream:
//   n_tok     tokens in a batch            n_embd    hidden size
//   n_head    query heads                  n_head_kv key/value heads (grouped-query attention)
//   head_dim  size of one head             n_ff      feed-forward (MLP) inner size
//   n_vocab   vocabulary size              n_layer   transformer blocks
// Activations are fp32, row-major [n_tok, width]. Weights may be F32, F16 or BF16 ([out, in], as
// Hugging Face stores nn.Linear weights) and are converted per tile inside the kernels, or quantized in
// GGUF's Q8_0 / Q4_0 blocks of 32 along each row (quant_blocks.h), multiplied by int8 dot products.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpstream::kernels {

enum class WeightType { F32, F16, BF16, Q8_0, Q4_0 };

// True for the block-quantized types (rows are whole blocks of 32 weights).
inline bool is_quantized(WeightType t) {
  return t == WeightType::Q8_0 || t == WeightType::Q4_0;
}
// Bytes of a row of n weights (n a multiple of 32 for the quantized types).
inline size_t row_bytes(WeightType t, int64_t n) {
  const size_t un = static_cast<size_t>(n);
  switch (t) {
    case WeightType::F32:
      return un * 4;
    case WeightType::F16:
    case WeightType::BF16:
      return un * 2;
    case WeightType::Q8_0:
      return un / 32 * 34;
    case WeightType::Q4_0:
      return un / 32 * 18;
  }
  return 0;
}

// How a weight matrix's rows are stored. Plain: row-major, row(r) is row r.
// Interleaved8 (Q8_0 / Q4_0, rows % 8 == 0): each group of eight rows is stored block by block with the
// rows interleaved (quant_dot.h, interleave_quantized_rows) for the int8 kernels. The group of row r (r % 8
// == 0) still starts at row(r), but single rows cannot be read from it: only quant_matmul_rows reads such a
// matrix. Paneled16 (BF16, rows % 16 == 0): each panel of sixteen rows is stored column by column
// (bf16_panels.h); only bf16_panel_matmul and panel_bf16_read_row read such a matrix.
enum class RowLayout { Plain, Interleaved8, Paneled16 };

// A read-only row-major weight matrix [rows, cols] in its stored precision and row layout.
struct MatrixView {
  WeightType type = WeightType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  RowLayout layout = RowLayout::Plain;
  size_t row_bytes() const { return kernels::row_bytes(type, cols); }
  size_t bytes() const { return row_bytes() * static_cast<size_t>(rows); }
  const void* row(int64_t r) const {
    return static_cast<const char*>(data) + static_cast<size_t>(r) * row_bytes();
  }
};

// A plain fp32 matrix [rows, cols] at w: training parameters and the speech encoder's weights, each one flat
// fp32 buffer, as the kernels see a matrix inside it.
inline MatrixView f32_view(const float* w, int64_t rows, int64_t cols) {
  return MatrixView{WeightType::F32, rows, cols, w};
}

}  // namespace gpstream::kernels
