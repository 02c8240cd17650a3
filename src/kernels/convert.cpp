// AVX2 row conversion and dot products (F32, F16 via F16C, BF16 via a 16-bit shift).
#include "kernels/convert.h"

#include <immintrin.h>

#include <cstring>

#include "util/half.h"

namespace gpstream::kernels {
namespace {

inline __m256 load8(const void* row, WeightType type, int64_t i) {
  switch (type) {
    case WeightType::F32:
      return _mm256_loadu_ps(static_cast<const float*>(row) + i);
    case WeightType::F16:
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
    case WeightType::BF16: {
      __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  }
  return _mm256_setzero_ps();
}

inline float load1(const void* row, WeightType type, int64_t i) {
  switch (type) {
    case WeightType::F32: return static_cast<const float*>(row)[i];
    case WeightType::F16: return f16_to_f32(static_cast<const uint16_t*>(row)[i]);
    case WeightType::BF16: return bf16_to_f32(static_cast<const uint16_t*>(row)[i]);
  }
  return 0.0f;
}

inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_hadd_ps(lo, lo);
  lo = _mm_hadd_ps(lo, lo);
  return _mm_cvtss_f32(lo);
}

template <WeightType T>
float dot_impl(const float* x, const void* row, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), load8(row, T, i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), load8(row, T, i + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), load8(row, T, i + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), load8(row, T, i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), load8(row, T, i), a0);
  float s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) s += x[i] * load1(row, T, i);
  return s;
}

}  // namespace

void convert_row(float* dst, const void* row, WeightType type, int64_t n) {
  if (type == WeightType::F32) {
    std::memcpy(dst, row, static_cast<size_t>(n) * 4);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(row, type, i));
  for (; i < n; ++i) dst[i] = load1(row, type, i);
}

float dot_row(const float* x, const void* row, WeightType type, int64_t n) {
  switch (type) {
    case WeightType::F32: return dot_impl<WeightType::F32>(x, row, n);
    case WeightType::F16: return dot_impl<WeightType::F16>(x, row, n);
    case WeightType::BF16: return dot_impl<WeightType::BF16>(x, row, n);
  }
  return 0.0f;
}

float dot_f32(const float* a, const float* b, int64_t n) { return dot_impl<WeightType::F32>(a, b, n); }

void convert_row_ref(float* dst, const void* row, WeightType type, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = load1(row, type, i);
}

float dot_row_ref(const float* x, const void* row, WeightType type, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * load1(row, type, i);
  return static_cast<float>(s);
}

}  // namespace gpstream::kernels
