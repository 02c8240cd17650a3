// RMSNorm backward (training). The forward is rmsnorm_forward (norm.h); the backward recomputes the
// inverse RMS from the saved input instead of storing it. For y = x · r · (w + offset), r = (mean(x²) +
// eps)^-½:
//   dw_i += Σ_t dy_i x_i r
//   dx_i += r (dy_i w'_i) − r³/n · x_i · Σ_j dy_j w'_j x_j
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// dx: [n_tok, n] (row stride lddx), accumulated; dweight: [n] accumulated (null: frozen);
// dout, x: [n_tok, n] with strides lddo, ldx; weight: [n].
void rmsnorm_backward(float* dx, int64_t lddx, float* dweight, const float* dout, int64_t lddo,
                      const float* x, int64_t ldx, const float* weight, int64_t n_tok, int64_t n, float eps,
                      float weight_offset = 0.0f);

// Scalar double-precision twin (oracle).
void rmsnorm_backward_ref(float* dx, int64_t lddx, float* dweight, const float* dout, int64_t lddo,
                          const float* x, int64_t ldx, const float* weight, int64_t n_tok, int64_t n,
                          float eps, float weight_offset = 0.0f);

}  // namespace gpstream::kernels
