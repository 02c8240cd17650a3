// Quantized dot products: AVX2 micro-kernels of R weight rows × C activation rows (R*C accumulators,
// one weight block and one activation block loaded once per block step) and their scalar twins.
#include "kernels/quant_dot.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/half.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define GPS_QUANT_AVX2 1
#endif

namespace gpstream::kernels {
namespace {

inline float load_scale(const uint8_t* block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return f16_to_f32(h);
}

// Block i of a row of type T: the 32 weights as int8 (Q4_0 nibbles minus 8), scalar path.
template <WeightType T>
inline void unpack_block(const uint8_t* block, int8_t* q) {
  if constexpr (T == WeightType::Q8_0) {
    std::memcpy(q, block + 2, 32);
  } else {
    for (int j = 0; j < 16; ++j) {
      q[j] = static_cast<int8_t>((block[2 + j] & 0x0f) - 8);
      q[j + 16] = static_cast<int8_t>((block[2 + j] >> 4) - 8);
    }
  }
}

template <WeightType T>
constexpr size_t block_bytes() {
  return T == WeightType::Q8_0 ? kQ8_0Bytes : kQ4_0Bytes;
}

template <WeightType T>
float dot_scalar(const uint8_t* w, const BlockQ8_0* x, int64_t nb) {
  float sum = 0.0f;
  int8_t q[32];
  for (int64_t b = 0; b < nb; ++b, w += block_bytes<T>()) {
    unpack_block<T>(w, q);
    int32_t s = 0;
    for (int j = 0; j < 32; ++j) s += int32_t{q[j]} * int32_t{x[b].qs[j]};
    sum += load_scale(w) * f16_to_f32(x[b].d) * static_cast<float>(s);
  }
  return sum;
}

#ifdef GPS_QUANT_AVX2

template <WeightType T>
inline __m256i load_block(const uint8_t* block) {
  if constexpr (T == WeightType::Q8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
  } else {
    // 16 bytes → low nibbles in lanes 0-15, high nibbles in lanes 16-31, each minus 8.
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
    return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), _mm256_set1_epi8(8));
  }
}

// Eight int32 partial sums of a · b (int8, |values| <= 127 so maddubs cannot saturate).
inline __m256i mul_sum_i8(__m256i a, __m256i b) {
  const __m256i abs_a = _mm256_sign_epi8(a, a);
  const __m256i b_signed = _mm256_sign_epi8(b, a);
  const __m256i pairs = _mm256_maddubs_epi16(abs_a, b_signed);
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

inline float hsum(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// out[c * ldo + r] = row r · activation c for R rows starting at w (stride ws) and C activation rows
// starting at x (stride nb blocks).
template <WeightType T, int R, int C>
void micro_kernel(float* out, int64_t ldo, const uint8_t* w, size_t ws, const BlockQ8_0* x, int64_t nb) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i xv[C];
    float dx[C];
    for (int c = 0; c < C; ++c) {
      const BlockQ8_0& xb = x[c * nb + b];
      xv[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
      dx[c] = _cvtsh_ss(xb.d);
    }
    for (int r = 0; r < R; ++r) {
      const uint8_t* wb = w + r * ws + static_cast<size_t>(b) * block_bytes<T>();
      uint16_t dh;
      std::memcpy(&dh, wb, 2);
      const float dw = _cvtsh_ss(dh);
      const __m256i wv = load_block<T>(wb);
      for (int c = 0; c < C; ++c) {
        const __m256 p = _mm256_cvtepi32_ps(mul_sum_i8(wv, xv[c]));
        acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(dw * dx[c]), p, acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) out[c * ldo + r] = hsum(acc[r][c]);
}

template <WeightType T>
void matmul_rows(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr, const BlockQ8_0* x, int64_t nb,
                 int64_t n_tok) {
  constexpr int R = 4;
  int64_t r = 0;
  for (; r + R <= nr; r += R) {
    const uint8_t* wr = w + static_cast<size_t>(r) * ws;
    int64_t t = 0;
    for (; t + 2 <= n_tok; t += 2) micro_kernel<T, R, 2>(out + t * ldo + r, ldo, wr, ws, x + t * nb, nb);
    if (t < n_tok) micro_kernel<T, R, 1>(out + t * ldo + r, ldo, wr, ws, x + t * nb, nb);
  }
  for (; r < nr; ++r) {
    const uint8_t* wr = w + static_cast<size_t>(r) * ws;
    for (int64_t t = 0; t < n_tok; ++t) micro_kernel<T, 1, 1>(out + t * ldo + r, ldo, wr, ws, x + t * nb, nb);
  }
}

#else

template <WeightType T>
void matmul_rows(float* out, int64_t ldo, const uint8_t* w, size_t ws, int64_t nr, const BlockQ8_0* x, int64_t nb,
                 int64_t n_tok) {
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t t = 0; t < n_tok; ++t) out[t * ldo + r] = dot_scalar<T>(w + static_cast<size_t>(r) * ws, x + t * nb, nb);
}

#endif

}  // namespace

void quantize_activations_q8_0(const float* x, int64_t ldx, int64_t n_tok, int64_t n, BlockQ8_0* out) {
  const int64_t nb = n / kQ8_0Block;
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* row = x + t * ldx;
    for (int64_t b = 0; b < nb; ++b) {
      const float* v = row + b * kQ8_0Block;
      BlockQ8_0& blk = out[t * nb + b];
#ifdef GPS_QUANT_AVX2
      const __m256 sign_mask = _mm256_set1_ps(-0.0f);
      __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8), v2 = _mm256_loadu_ps(v + 16),
             v3 = _mm256_loadu_ps(v + 24);
      __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign_mask, v0), _mm256_andnot_ps(sign_mask, v1)),
                               _mm256_max_ps(_mm256_andnot_ps(sign_mask, v2), _mm256_andnot_ps(sign_mask, v3)));
      __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
      m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
      m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
      const float amax = _mm_cvtss_f32(m4);
      blk.d = f32_to_f16(amax / 127.0f);
      const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
      constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      const __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, id), kRound));
      const __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, id), kRound));
      const __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, id), kRound));
      const __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, id), kRound));
      // Pack 32-bit → 16-bit → 8-bit (saturating), then undo the lane interleaving of the packs.
      __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
      p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk.qs), p);
#else
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(v[j]));
      blk.d = f32_to_f16(amax / 127.0f);
      const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
      for (int j = 0; j < 32; ++j)
        blk.qs[j] = static_cast<int8_t>(std::nearbyint(std::clamp(v[j] * id, -127.0f, 127.0f)));
#endif
    }
  }
}

void quant_matmul_rows(float* out, int64_t ldo, const MatrixView& w, int64_t r0, int64_t nr, const BlockQ8_0* xq,
                       int64_t n_tok) {
  const int64_t nb = w.cols / kQ8_0Block;
  const auto* base = static_cast<const uint8_t*>(w.row(r0));
  const size_t ws = w.row_bytes();
  if (w.type == WeightType::Q8_0) {
    matmul_rows<WeightType::Q8_0>(out + r0, ldo, base, ws, nr, xq, nb, n_tok);
  } else {
    matmul_rows<WeightType::Q4_0>(out + r0, ldo, base, ws, nr, xq, nb, n_tok);
  }
}

float quant_dot_ref(const void* w_row, WeightType type, const BlockQ8_0* xq, int64_t n_blocks) {
  const auto* w = static_cast<const uint8_t*>(w_row);
  return type == WeightType::Q8_0 ? dot_scalar<WeightType::Q8_0>(w, xq, n_blocks)
                                  : dot_scalar<WeightType::Q4_0>(w, xq, n_blocks);
}

}  // namespace gpstream::kernels
