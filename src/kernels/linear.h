// Linear layer forward: out[n_tok, w.rows] = x[n_tok, w.cols] · Wᵀ (+ bias). Five regimes:
//  - Few tokens (decode, small batches), F32/F16/BF16: each stored row read once and widened in registers
//    for up to four tokens at a time (linear_small_batch.h) — memory-bandwidth bound.
//  - F32 weights, many tokens: one OpenBLAS sgemm (multi-threaded by OpenBLAS's OpenMP pool).
//  - 16-bit weights, many tokens (prefill, training): row tiles converted to fp32 in per-thread scratch,
//    each tile multiplied by a single-threaded sgemm, so conversion stays in cache.
//  - BF16 weights repacked into 16-row panels (RowLayout::Paneled16, bf16_panels.h), any number of
//    tokens: a register-blocked fp32 micro-kernel over 64-row tiles on all threads.
//  - Q8_0 / Q4_0 weights, any number of tokens: the activations are quantized to Q8_0 once (into the
//    scratch), then threads take tiles of rows and run int8 micro-kernels over every token (quant_dot.h).
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

// Sets the number of threads OpenBLAS uses for calls made outside our parallel regions (GEMMs too small to
// split, the F32 path) to the model's thread count; a no-op when unchanged. Without it OpenBLAS keeps its
// default (all cores), and a `-t 1` forward paid for a second thread's team on every small GEMM: 3x slower
// on the shipped model.
void set_blas_threads(int n_threads);

// Below this many multiply-adds (rows × cols × tokens) a parallel region costs more than it saves (and on a
// loaded machine a spinning second thread can cost far more): the linear runs on one thread.
inline constexpr int64_t kMinParallelMultiplyAdds = int64_t{1} << 18;

// True when linear_forward takes the few-token regime (linear_small_batch.h) for this type and n_tok.
bool linear_takes_few_tokens(WeightType type, int64_t n_tok);

// Floats of scratch linear_forward needs for this shape with n_threads threads.
int64_t linear_scratch_floats(const MatrixView& w, int64_t n_tok, int n_threads);

// out: [n_tok, w.rows] (row stride ldo >= w.rows); x: [n_tok, w.cols] (row stride ldx); bias: [w.rows] or
// null.
void linear_forward(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                    const float* bias, int64_t n_tok, float* scratch, int n_threads);

// The many-token regime alone (sgemm; tiles widened to fp32 for 16-bit weights) whatever n_tok is, with
// linear_tiled_scratch_floats(w, n_threads) floats of scratch: for benchmarks comparing the regimes.
int64_t linear_tiled_scratch_floats(const MatrixView& w, int n_threads);
void linear_forward_tiled(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                          const float* bias, int64_t n_tok, float* scratch, int n_threads);

// Plain triple loop in double: the oracle for tests.
void linear_forward_ref(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                        const float* bias, int64_t n_tok);

}  // namespace gpstream::kernels
