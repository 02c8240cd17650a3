// RMSNorm forward.
#include "kernels/norm.h"

#include <cmath>

namespace gpstream::kernels {

void rmsnorm_forward(float* out, int64_t ldo, const float* x, int64_t ldx, const float* weight, int64_t n_tok, int64_t n,
                     float eps, float weight_offset) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* xr = x + t * ldx;
    float* o = out + t * ldo;
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    for (int64_t i = 0; i < n; ++i) o[i] = (xr[i] * inv) * (weight[i] + weight_offset);
  }
}

}  // namespace gpstream::kernels
