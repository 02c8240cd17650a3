// Linear layer backward for fp32 weights (training keeps its parameters in fp32), as OpenBLAS GEMMs
// over all tokens at once. Forward: out[n_tok, rows] = x[n_tok, cols] · Wᵀ + b (linear.h). Backward:
//   dx[n_tok, cols] += dout · W        dW[rows, cols] += doutᵀ · x        db[rows] += Σ_t dout
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// Any of dx, dweight, dbias may be null (frozen input or parameter). w: [rows, cols] fp32.
// accumulate_dx = false overwrites dx instead of adding (saves zeroing it first).
// Called inside an OpenMP parallel region the GEMMs run single-threaded (OpenBLAS's OpenMP build).
void linear_backward(float* dx, int64_t lddx, float* dweight, float* dbias, const float* dout, int64_t lddo,
                     const float* x, int64_t ldx, const float* w, int64_t rows, int64_t cols, int64_t n_tok,
                     bool accumulate_dx = true);

// Triple loops in double: the oracle for tests.
void linear_backward_ref(float* dx, int64_t lddx, float* dweight, float* dbias, const float* dout,
                         int64_t lddo, const float* x, int64_t ldx, const float* w, int64_t rows,
                         int64_t cols, int64_t n_tok);

}  // namespace gpstream::kernels
