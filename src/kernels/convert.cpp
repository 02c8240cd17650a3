// AVX2 row conversion and dot products (F32, F16 via F16C, BF16 via a 16-bit shift; Q8_0 and Q4_0 rows
// are dequantized block by block: these are the exact-weight paths, the int8 kernels are quant_dot.h), with
// scalar twins when the build does not target AVX2.
#include "kernels/convert.h"

#include <cstring>
#include <vector>

#include "kernels/quant_blocks.h"
#include "util/half.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define GPS_CONVERT_AVX2 1
#endif

namespace gpstream::kernels {
namespace {

#ifdef GPS_CONVERT_AVX2

inline __m256 load8(const void* row, WeightType type, int64_t i) {
  switch (type) {
    case WeightType::F32:
      return _mm256_loadu_ps(static_cast<const float*>(row) + i);
    case WeightType::F16:
      return _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
    case WeightType::BF16: {
      __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    case WeightType::Q8_0:
    case WeightType::Q4_0:
      break;  // never called: quantized rows go through dequantize_block
  }
  return _mm256_setzero_ps();
}

#endif

inline float load1(const void* row, WeightType type, int64_t i) {
  switch (type) {
    case WeightType::F32:
      return static_cast<const float*>(row)[i];
    case WeightType::F16:
      return f16_to_f32(static_cast<const uint16_t*>(row)[i]);
    case WeightType::BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(row)[i]);
    case WeightType::Q8_0:
    case WeightType::Q4_0: {
      float block[32];
      const int64_t b = i / kQ8_0Block;
      if (type == WeightType::Q8_0) {
        dequantize_row_q8_0(static_cast<const char*>(row) + b * kQ8_0Bytes, block, kQ8_0Block);
      } else {
        dequantize_row_q4_0(static_cast<const char*>(row) + b * kQ4_0Bytes, block, kQ8_0Block);
      }
      return block[i % kQ8_0Block];
    }
  }
  return 0.0f;
}

// Dequantizes a whole quantized row (n % 32 == 0).
void dequantize_quant_row(float* dst, const void* row, WeightType type, int64_t n) {
  if (type == WeightType::Q8_0) {
    dequantize_row_q8_0(row, dst, n);
  } else {
    dequantize_row_q4_0(row, dst, n);
  }
}

#ifdef GPS_CONVERT_AVX2

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
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
         a3 = _mm256_setzero_ps();
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

#else

template <WeightType T>
float dot_impl(const float* x, const void* row, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += x[i] * load1(row, T, i);
  return s;
}

#endif

}  // namespace

void convert_row(float* dst, const void* row, WeightType type, int64_t n) {
  if (is_quantized(type)) {
    dequantize_quant_row(dst, row, type, n);
    return;
  }
  if (type == WeightType::F32) {
    std::memcpy(dst, row, static_cast<size_t>(n) * 4);
    return;
  }
  int64_t i = 0;
#ifdef GPS_CONVERT_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(row, type, i));
#endif
  for (; i < n; ++i) dst[i] = load1(row, type, i);
}

float dot_row(const float* x, const void* row, WeightType type, int64_t n) {
  switch (type) {
    case WeightType::F32:
      return dot_impl<WeightType::F32>(x, row, n);
    case WeightType::F16:
      return dot_impl<WeightType::F16>(x, row, n);
    case WeightType::BF16:
      return dot_impl<WeightType::BF16>(x, row, n);
    case WeightType::Q8_0:
    case WeightType::Q4_0: {
      // fp32 activations against dequantized weights, one block at a time.
      float block[32];
      const size_t bytes = row_bytes(type, kQ8_0Block);
      float s = 0.0f;
      for (int64_t b = 0; b < n / kQ8_0Block; ++b) {
        dequantize_quant_row(block, static_cast<const char*>(row) + b * bytes, type, kQ8_0Block);
        s += dot_impl<WeightType::F32>(x + b * kQ8_0Block, block, kQ8_0Block);
      }
      return s;
    }
  }
  return 0.0f;
}

float dot_f32(const float* a, const float* b, int64_t n) {
  return dot_impl<WeightType::F32>(a, b, n);
}

void convert_row_ref(float* dst, const void* row, WeightType type, int64_t n) {
  if (is_quantized(type)) {
    dequantize_quant_row(dst, row, type, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = load1(row, type, i);
}

float dot_row_ref(const float* x, const void* row, WeightType type, int64_t n) {
  if (is_quantized(type)) {
    std::vector<float> w(static_cast<size_t>(n));
    dequantize_quant_row(w.data(), row, type, n);
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * w[static_cast<size_t>(i)];
    return static_cast<float>(s);
  }
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * load1(row, type, i);
  return static_cast<float>(s);
}

}  // namespace gpstream::kernels
