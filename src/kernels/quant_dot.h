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

// out[t * ldo + i] = row (r0 + i) of w · activation row t, for i < nr and t < n_tok; xq holds n_tok rows
// of w.cols / 32 blocks. w.type must be Q8_0 or Q4_0.
void quant_matmul_rows(float* out, int64_t ldo, const MatrixView& w, int64_t r0, int64_t nr, const BlockQ8_0* xq,
                       int64_t n_tok);

// Scalar reference of one dot product (exact int32 per block, fp32 accumulation in block order).
float quant_dot_ref(const void* w_row, WeightType type, const BlockQ8_0* xq, int64_t n_blocks);

}  // namespace gpstream::kernels
