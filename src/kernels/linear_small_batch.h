// The few-token regime of the linear layer (decode, small batches) for F32 / F16 / BF16 weights: each weight
// row is read from memory once and widened to fp32 in registers once for up to four tokens, so the layer is
// bound by the memory bandwidth rather than by the widening. BF16 is widened without a shuffle: a 32-bit
// lane holding two bf16 values gives the odd one by masking the low half and the even one by shifting it up,
// so the activations are first reordered per 16 columns (even columns, then odd; `small_batch_prepare`).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

// Activation rows as the kernel reads them: row t at data + t * ld.
struct PreparedActivations {
  const float* data = nullptr;
  int64_t ld = 0;
};

// Floats of scratch small_batch_prepare needs for n_tok rows of n columns (0 unless BF16).
int64_t small_batch_scratch_floats(WeightType type, int64_t n_tok, int64_t n);

// The n_tok activation rows (row stride ldx) in the column order the kernel for `type` reads: for BF16 a
// reordered copy in `scratch` (or, when scratch is null, in a per-thread buffer), otherwise x itself.
PreparedActivations small_batch_prepare(const float* x, int64_t ldx, int64_t n_tok, int64_t n,
                                        WeightType type, float* scratch);

// out[t * ldo + r] = row r of w · activation row t (+ bias[r]) for rows [r0, r0 + nr) and t < n_tok;
// x from small_batch_prepare. w.type is F32, F16 or BF16.
void small_batch_rows(float* out, int64_t ldo, const PreparedActivations& x, const MatrixView& w,
                      const float* bias, int64_t r0, int64_t nr, int64_t n_tok);

}  // namespace gpstream::kernels
