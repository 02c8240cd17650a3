// RMSNorm forward.
#include "kernels/norm.h"

#include <cmath>

namespace gpstream::kernels {

namespace {

// Σ x² in double, in sixteen partial sums (element i into sum i % 16) added in a fixed order at the end: a
// loop GCC turns into four chains of four-double vectors (one serial chain of 896 dependent adds cost
// ~1 µs a row, 1 % of a 16-session Scheduler run).
double sum_of_squares(const float* x, int64_t n) {
  constexpr int64_t kLanes = 16;
  double part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) part[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (int64_t j = 0; i + j < n; ++j) part[j] += static_cast<double>(x[i + j]) * x[i + j];
  double ss = 0.0;
  for (double p : part) ss += p;
  return ss;
}

}  // namespace

void rmsnorm_forward(float* out, int64_t ldo, const float* x, int64_t ldx, const float* weight, int64_t n_tok,
                     int64_t n, float eps, float weight_offset) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* xr = x + t * ldx;
    float* o = out + t * ldo;
    const double ss = sum_of_squares(xr, n);
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    for (int64_t i = 0; i < n; ++i) o[i] = (xr[i] * inv) * (weight[i] + weight_offset);
  }
}

}  // namespace gpstream::kernels
