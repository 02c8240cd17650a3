// The few-token regime of the linear layer (decode, small batches) for F32 / F16 / BF16 weights: each weight
// row is read from memory once and widened to fp32 in registers once for up to four tokens, so the layer is
// bound by the memory bandwidth rather than by the widening. BF16 is widened without a shuffle: a 32-bit
// lane holding two bf16 values gives the odd one by masking the low half and the even one by shifting it up,
// so the activations are first reordered per 16 columns (even columns, then odd; `small_batch_prepare`).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

// Floats of scratch small_batch_prepare needs for n_tok rows of n columns.
int64_t small_batch_scratch_floats(int64_t n_tok, int64_t n);

// Copies the n_tok activation rows (row stride ldx) into `prepared` ([n_tok, n], contiguous) in the column
// order the kernel for weight type `type` reads; returns the pointer small_batch_rows takes.
const float* small_batch_prepare(const float* x, int64_t ldx, int64_t n_tok, int64_t n, WeightType type,
                                 float* prepared);

// out[t * ldo + r] = row r of w · activation row t (+ bias[r]) for rows [r0, r0 + nr) and t < n_tok;
// `prepared` from small_batch_prepare. w.type is F32, F16 or BF16.
void small_batch_rows(float* out, int64_t ldo, const float* prepared, const MatrixView& w, const float* bias,
                      int64_t r0, int64_t nr, int64_t n_tok);

}  // namespace gpstream::kernels
