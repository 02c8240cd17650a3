// GELU in its tanh form (Hugging Face's gelu_pytorch_tanh: Gemma's gated MLP, the speech encoder), computed
// through a sigmoid: with u = k (x + c x³), k = √(2/π), c = 0.044715,
//   0.5 (1 + tanh u) = s = 1 / (1 + exp(−2u)),  gelu(x) = x s,  gelu'(x) = s + x s (1 − s) 2k (1 + 3c x²),
// one fast_exp per value (relative error ~2e-7), eight lanes at a time; libm's tanh does not vectorize.
#pragma once

#include <cstdint>

#include "kernels/fast_exp.h"

namespace gpstream::kernels {

inline constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
inline constexpr float kGeluC = 0.044715f;

// With AVX2 the one-value forms go through the eight-lane code, so a row's vector body and its tail agree.
float gelu_tanh(float x);
float gelu_tanh_grad(float x);

// y = gelu(x) over n values (y may alias x).
void gelu_tanh_rows(float* y, const float* x, int64_t n);
// dx = dy · gelu'(x) over n values (dx may alias dy).
void gelu_tanh_backward_rows(float* dx, const float* dy, const float* x, int64_t n);

#if defined(__AVX2__) && defined(__FMA__)
// s = σ(2u) of eight lanes: gelu(x) = x s.
inline __m256 gelu_sigmoid8(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 u = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, _mm256_set1_ps(kGeluC), _mm256_set1_ps(1.0f)));
  const __m256 e = fast_exp8(_mm256_mul_ps(u, _mm256_set1_ps(-2.0f * kGeluK)));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// gelu'(x) of eight lanes, given s = gelu_sigmoid8(x).
inline __m256 gelu_slope8(__m256 x, __m256 s) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 poly = _mm256_mul_ps(_mm256_set1_ps(2.0f * kGeluK),
                                    _mm256_fmadd_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(3.0f * kGeluC), one));
  return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(x, s), _mm256_sub_ps(one, s)), poly, s);
}
#endif

}  // namespace gpstream::kernels
