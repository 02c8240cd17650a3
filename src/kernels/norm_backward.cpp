// RMSNorm backward.
#include "kernels/norm_backward.h"

#include <cmath>

namespace gpstream::kernels {

void rmsnorm_backward(float* dx, int64_t lddx, float* dweight, const float* dout, int64_t lddo,
                      const float* x, int64_t ldx, const float* weight, int64_t n_tok, int64_t n, float eps,
                      float weight_offset) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* xr = x + t * ldx;
    const float* dy = dout + t * lddo;
    float* dxr = dx + t * lddx;
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    // Same rounding as rmsnorm_forward.
    const float r = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    float dot = 0.0f;
    for (int64_t i = 0; i < n; ++i) dot += dy[i] * (weight[i] + weight_offset) * xr[i];
    const float c = r * r * r * dot / static_cast<float>(n);
    for (int64_t i = 0; i < n; ++i) dxr[i] += r * dy[i] * (weight[i] + weight_offset) - c * xr[i];
    if (dweight)
      for (int64_t i = 0; i < n; ++i) dweight[i] += dy[i] * xr[i] * r;
  }
}

void rmsnorm_backward_ref(float* dx, int64_t lddx, float* dweight, const float* dout, int64_t lddo,
                          const float* x, int64_t ldx, const float* weight, int64_t n_tok, int64_t n,
                          float eps, float weight_offset) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* xr = x + t * ldx;
    const float* dy = dout + t * lddo;
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    double dot = 0.0;
    for (int64_t i = 0; i < n; ++i) dot += static_cast<double>(dy[i]) * (weight[i] + weight_offset) * xr[i];
    for (int64_t i = 0; i < n; ++i) {
      const double w = static_cast<double>(weight[i]) + weight_offset;
      dx[t * lddx + i] +=
          static_cast<float>(r * dy[i] * w - r * r * r * dot / static_cast<double>(n) * xr[i]);
      if (dweight) dweight[i] += static_cast<float>(static_cast<double>(dy[i]) * xr[i] * r);
    }
  }
}

}  // namespace gpstream::kernels
