// Int8 dot products of quantized weight rows (Q8_0 / Q4_0) with activations quantized per block to Q8_0,
// as llama.cpp computes them: per block, an exact int32 sum of products, times d_weight * d_activation,
// accumulated in fp32. AVX2 (maddubs) when the build targets x86-64-v3, scalar otherwise.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/quant_blocks.h"

namespace gpstream::kernels {

// Quantizes n_tok rows of n activations (row stride ldx, n % 32 == 0) to Q8_0: row t's blocks at
// out + t * n / 32. Scale d = max|x| / 127 (stored as fp16), q = round-half-even(x * 127 / max|x|).
void quantize_activations_q8_0(const float* x, int64_t ldx, int64_t n_tok, int64_t n, BlockQ8_0* out);

// Activations as the int8 kernels read them: n_tok rows of nb Q8_0 blocks split into arrays — the 32 quants
// of each block 32-byte aligned (a 34-byte BlockQ8_0 puts every other 32-byte load across two cache lines),
// its scale as fp32, and the sum of its quants (the Q4_0 kernel multiplies the unsigned nibbles and
// subtracts 8 * sum).
struct QuantizedActivations {
  int8_t* qs = nullptr;     // [n_tok * nb * 32], 32-byte aligned
  float* scales = nullptr;  // [n_tok * nb]
  int32_t* sums = nullptr;  // [n_tok * nb]
  int64_t nb = 0;
};

// Bytes of scratch QuantizedActivations over n_tok rows of n columns need (with alignment slack).
int64_t quantized_activations_bytes(int64_t n_tok, int64_t n);
// Lays the arrays out in `scratch` (at least quantized_activations_bytes(n_tok, n) bytes).
QuantizedActivations quantized_activations_in(void* scratch, int64_t n_tok, int64_t n);
// Quantizes activation rows [t0, t0 + count) (row t at x + t * ldx) into qa, with scales and sums.
void quantize_activations(const float* x, int64_t ldx, int64_t t0, int64_t count,
                          const QuantizedActivations& qa);

// out[t * ldo + i] = row (r0 + i) of w · activation row t, for i < nr and t < n_tok. w.type must be Q8_0 or
// Q4_0 and w.cols == 32 * xa.nb; when w.layout == RowLayout::Interleaved8, r0 and nr must be multiples of 8.
void quant_matmul_rows(float* out, int64_t ldo, const MatrixView& w, int64_t r0, int64_t nr,
                       const QuantizedActivations& xa, int64_t n_tok);

// Q8_0 / Q4_0 rows interleaved in groups of eight (RowLayout::Interleaved8). Group g (rows 8g..8g+7)
// keeps its bytes where the rows were, block by block: for block b, at byte 8 * block_bytes * b of the group,
// the eight rows' fp16 scales (row r's at 2r), then vectors of 32 bytes (Q4_0: 4, Q8_0: 8): byte 4r + i of
// vector v is row r's quant byte 4v + i. So one 32-byte load holds four quant bytes of every row (Q4_0: its
// low nibbles are weights 4v..4v+3 of each row, its high nibbles weights 16+4v..16+4v+3; Q8_0: weights
// 4v..4v+3), and the kernel multiplies it with one broadcast of four activation quants: no horizontal adds,
// one vector of scales for eight rows, one sequential stream of weights.
constexpr int64_t kInterleaveRows = 8;
// Q8_0 or Q4_0, not interleaved yet, rows % 8 == 0, cols % 32 == 0.
bool can_interleave_rows(const MatrixView& w);
// Writes w's rows interleaved to out (w.rows * w.row_bytes() bytes).
void interleave_quantized_rows(const MatrixView& w, void* out);

// Scalar reference of one dot product (exact int32 per block, fp32 accumulation in block order).
float quant_dot_ref(const void* w_row, WeightType type, const BlockQ8_0* xq, int64_t n_blocks);

}  // namespace gpstream::kernels
