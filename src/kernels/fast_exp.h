// A vectorizable single-precision exp for softmax-type loops (attention, cross-entropy in training):
// Cody–Waite range reduction and a degree-6 polynomial (Cephes expf), relative error ~2e-7 on
// [-87, 88]; inputs at or below -87.3 (including -inf from masks) give 0, above 88 give 2^128-ish.
// Plain arithmetic, so GCC auto-vectorizes loops that call it (libm's expf does not vectorize).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace gpstream::kernels {

inline float fast_exp(float x) {
  x = x < -88.0f ? -88.0f : (x > 88.0f ? 88.0f : x);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t e = static_cast<int32_t>(n) + 127;
  const int32_t bits = (e > 0 ? e : 0) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return y * scale;
}

#if defined(__AVX2__) && defined(__FMA__)
// fast_exp of eight lanes, the same reduction and polynomial with fused multiply-adds (so not always the
// scalar form's bits): GCC does not vectorize loops with the scalar form's clamps on its own.
inline __m256 fast_exp8(__m256 x) {
  const __m256 z = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-88.0f)), _mm256_set1_ps(88.0f));
  const __m256 n =
      _mm256_floor_ps(_mm256_fmadd_ps(z, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), z);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_max_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)),
                                     _mm256_setzero_si256());
  return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}
#endif

}  // namespace gpstream::kernels
