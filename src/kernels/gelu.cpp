// GELU (tanh form) through a fast_exp sigmoid; see gelu.h.
#include "kernels/gelu.h"

namespace gpstream::kernels {

namespace {

#if !(defined(__AVX2__) && defined(__FMA__))
float gelu_sigmoid(float x) {
  return 1.0f / (1.0f + fast_exp(-2.0f * kGeluK * (x + kGeluC * x * x * x)));
}
#endif

}  // namespace

float gelu_tanh(float x) {
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 v = _mm256_set1_ps(x);
  return _mm256_cvtss_f32(_mm256_mul_ps(v, gelu_sigmoid8(v)));
#else
  return x * gelu_sigmoid(x);
#endif
}

float gelu_tanh_grad(float x) {
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 v = _mm256_set1_ps(x);
  return _mm256_cvtss_f32(gelu_slope8(v, gelu_sigmoid8(v)));
#else
  const float s = gelu_sigmoid(x);
  return s + x * s * (1.0f - s) * 2.0f * kGeluK * (1.0f + 3.0f * kGeluC * x * x);
#endif
}

void gelu_tanh_rows(float* y, const float* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, gelu_sigmoid8(v)));
  }
#endif
  for (; i < n; ++i) y[i] = gelu_tanh(x[i]);
}

void gelu_tanh_backward_rows(float* dx, const float* dy, const float* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_loadu_ps(dy + i), gelu_slope8(v, gelu_sigmoid8(v))));
  }
#endif
  for (; i < n; ++i) dx[i] = dy[i] * gelu_tanh_grad(x[i]);
}

}  // namespace gpstream::kernels
