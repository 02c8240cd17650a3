// Softmax cross-entropy.
#include "kernels/cross_entropy.h"

#include <algorithm>
#include <cmath>

#include "kernels/fast_exp.h"

namespace gpstream::kernels {
namespace {

// max and log-sum-exp of one row. The sum is kept in double: in float, the lane that holds the largest
// term (1) drops every term below half its ulp (6e-8), and a vocabulary of thousands of such terms lowers a
// confident row's loss by ~1e-5 (tens of percent of it; docs/training.md, the PyTorch recipe).
void row_stats(const float* z, int64_t n, float& mx, double& lse) {
  mx = z[0];
  for (int64_t j = 1; j < n; ++j) mx = std::max(mx, z[j]);
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) sum += static_cast<double>(fast_exp(z[j] - mx));
  lse = static_cast<double>(mx) + std::log(sum);
}

}  // namespace

void cross_entropy_forward(float* losses, const float* logits, const int32_t* targets, int64_t n_rows,
                           int64_t n_vocab) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* z = logits + r * n_vocab;
    float mx;
    double lse;
    row_stats(z, n_vocab, mx, lse);
    losses[r] = static_cast<float>(lse - z[targets[r]]);
  }
}

void cross_entropy_backward(float* dlogits, const float* logits, const int32_t* targets, int64_t n_rows,
                            int64_t n_vocab, float scale) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* z = logits + r * n_vocab;
    float* dz = dlogits + r * n_vocab;
    float mx;
    double lse;
    row_stats(z, n_vocab, mx, lse);
    const float l = static_cast<float>(lse);
#pragma omp simd
    for (int64_t j = 0; j < n_vocab; ++j) dz[j] = scale * fast_exp(z[j] - l);
    dz[targets[r]] -= scale;
  }
}

}  // namespace gpstream::kernels
