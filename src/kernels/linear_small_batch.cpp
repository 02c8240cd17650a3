// Few-token linear kernel (see linear_small_batch.h): one pass over each weight row per group of up to four
// tokens, weights widened to fp32 in registers, fp32 FMA accumulation (AVX2; a scalar twin otherwise).
#include "kernels/linear_small_batch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "util/half.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define GPS_SMALL_BATCH_AVX2 1
#endif

namespace gpstream::kernels {
namespace {

constexpr int64_t kChunk = 16;  // columns per step: one 256-bit load of bf16 / f16 weights
constexpr int kMaxGroup = 4;    // tokens sharing one widened weight chunk
// From this many tokens on, rows go in pairs (row_pair_times_group); below, one row at a time streams the
// weights in order, which is what decode (bandwidth-bound) wants. Set from bench_linear.
constexpr int64_t kPairTokens = 4;

template <WeightType T>
inline float load_one(const void* row, int64_t i) {
  if constexpr (T == WeightType::BF16)
    return bf16_to_f32(static_cast<const uint16_t*>(row)[i]);
  else if constexpr (T == WeightType::F16)
    return f16_to_f32(static_cast<const uint16_t*>(row)[i]);
  else
    return static_cast<const float*>(row)[i];
}

#ifdef GPS_SMALL_BATCH_AVX2

// Columns [i, i + 16) of a row as two vectors of eight fp32 weights, matching the activation order
// small_batch_prepare writes: BF16 even columns then odd columns, F16 / F32 in order.
template <WeightType T>
inline void load_chunk(const void* row, int64_t i, __m256& lo, __m256& hi) {
  if constexpr (T == WeightType::BF16) {
    const __m256i v =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(row) + i));
    lo = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));  // even columns
    hi = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));  // odd
  } else if constexpr (T == WeightType::F16) {
    const auto* p = static_cast<const uint16_t*>(row) + i;
    lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
  } else {
    const float* p = static_cast<const float*>(row) + i;
    lo = _mm256_loadu_ps(p);
    hi = _mm256_loadu_ps(p + 8);
  }
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// out[c * ldo] = row · activation c for C tokens (prepared rows at xp + c * ldx). With one or two tokens the
// loop is unrolled over two chunks so the FMA latency does not bound it.
template <WeightType T, int C>
void row_times_group(float* out, int64_t ldo, const void* row, const float* xp, int64_t ldx, int64_t n,
                     float bias) {
  constexpr int U = C <= 2 ? 2 : 1;
  __m256 acc[C][2 * U];
  for (int c = 0; c < C; ++c)
    for (int k = 0; k < 2 * U; ++k) acc[c][k] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + U * kChunk <= n; i += U * kChunk) {
    for (int u = 0; u < U; ++u) {
      __m256 lo, hi;
      load_chunk<T>(row, i + u * kChunk, lo, hi);
      for (int c = 0; c < C; ++c) {
        const float* x = xp + c * ldx + i + u * kChunk;
        acc[c][2 * u] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x), acc[c][2 * u]);
        acc[c][2 * u + 1] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x + 8), acc[c][2 * u + 1]);
      }
    }
  }
  for (; i + kChunk <= n; i += kChunk) {
    __m256 lo, hi;
    load_chunk<T>(row, i, lo, hi);
    for (int c = 0; c < C; ++c) {
      acc[c][0] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(xp + c * ldx + i), acc[c][0]);
      acc[c][1] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(xp + c * ldx + i + 8), acc[c][1]);
    }
  }
  for (int c = 0; c < C; ++c) {
    __m256 a = acc[c][0];
    for (int k = 1; k < 2 * U; ++k) a = _mm256_add_ps(a, acc[c][k]);
    float s = hsum(a);
    for (int64_t j = i; j < n; ++j) s += xp[c * ldx + j] * load_one<T>(row, j);  // tail kept in order
    out[c * ldo] = s + bias;
  }
}

// Two rows × C tokens (one accumulator per pair, both halves of a chunk into it): each activation chunk
// is loaded once for both rows, which is what keeps the FMA units busy with a dozen or more tokens.
template <WeightType T, int C>
void row_pair_times_group(float* out, int64_t ldo, const void* row0, const void* row1, const float* xp,
                          int64_t ldx, int64_t n, float bias0, float bias1) {
  __m256 acc[2][C];
  for (int c = 0; c < C; ++c) acc[0][c] = acc[1][c] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    __m256 lo0, hi0, lo1, hi1;
    load_chunk<T>(row0, i, lo0, hi0);
    load_chunk<T>(row1, i, lo1, hi1);
    for (int c = 0; c < C; ++c) {
      const __m256 xl = _mm256_loadu_ps(xp + c * ldx + i), xh = _mm256_loadu_ps(xp + c * ldx + i + 8);
      acc[0][c] = _mm256_fmadd_ps(hi0, xh, _mm256_fmadd_ps(lo0, xl, acc[0][c]));
      acc[1][c] = _mm256_fmadd_ps(hi1, xh, _mm256_fmadd_ps(lo1, xl, acc[1][c]));
    }
  }
  for (int c = 0; c < C; ++c) {
    float s0 = hsum(acc[0][c]), s1 = hsum(acc[1][c]);
    for (int64_t j = i; j < n; ++j) {
      s0 += xp[c * ldx + j] * load_one<T>(row0, j);
      s1 += xp[c * ldx + j] * load_one<T>(row1, j);
    }
    out[c * ldo] = s0 + bias0;
    out[c * ldo + 1] = s1 + bias1;
  }
}

template <WeightType T>
void rows_impl(float* out, int64_t ldo, const float* xp, int64_t ldx, const MatrixView& w, const float* bias,
               int64_t r0, int64_t nr, int64_t n_tok) {
  const int64_t n = w.cols;
  int64_t r = r0;
  if (n_tok >= kPairTokens) {
    for (; r + 2 <= r0 + nr; r += 2) {
      const void* row0 = w.row(r);
      const void* row1 = w.row(r + 1);
      const float b0 = bias ? bias[r] : 0.0f, b1 = bias ? bias[r + 1] : 0.0f;
      for (int64_t t = 0; t < n_tok; t += kMaxGroup) {
        float* o = out + t * ldo + r;
        const float* x = xp + t * ldx;
        switch (std::min<int64_t>(kMaxGroup, n_tok - t)) {
          case 1:
            row_pair_times_group<T, 1>(o, ldo, row0, row1, x, ldx, n, b0, b1);
            break;
          case 2:
            row_pair_times_group<T, 2>(o, ldo, row0, row1, x, ldx, n, b0, b1);
            break;
          case 3:
            row_pair_times_group<T, 3>(o, ldo, row0, row1, x, ldx, n, b0, b1);
            break;
          default:
            row_pair_times_group<T, 4>(o, ldo, row0, row1, x, ldx, n, b0, b1);
            break;
        }
      }
    }
  }
  for (; r < r0 + nr; ++r) {
    const void* row = w.row(r);
    const float b = bias ? bias[r] : 0.0f;
    for (int64_t t = 0; t < n_tok; t += kMaxGroup) {
      float* o = out + t * ldo + r;
      const float* x = xp + t * ldx;
      switch (std::min<int64_t>(kMaxGroup, n_tok - t)) {
        case 1:
          row_times_group<T, 1>(o, ldo, row, x, ldx, n, b);
          break;
        case 2:
          row_times_group<T, 2>(o, ldo, row, x, ldx, n, b);
          break;
        case 3:
          row_times_group<T, 3>(o, ldo, row, x, ldx, n, b);
          break;
        default:
          row_times_group<T, 4>(o, ldo, row, x, ldx, n, b);
          break;
      }
    }
  }
}

#else

// Where column c of a row sits in the prepared activations: BF16 rows are prepared even columns then odd
// columns per chunk of 16 (small_batch_prepare), F16 / F32 in order.
template <WeightType T>
inline int64_t prepared_index(int64_t c, int64_t n) {
  if constexpr (T != WeightType::BF16) return c;
  const int64_t chunk = c / kChunk * kChunk, k = c % kChunk;
  if (chunk + kChunk > n) return c;  // the tail is copied in order
  return chunk + (k % 2 == 0 ? k / 2 : kChunk / 2 + k / 2);
}

template <WeightType T>
void rows_impl(float* out, int64_t ldo, const float* xp, int64_t ldx, const MatrixView& w, const float* bias,
               int64_t r0, int64_t nr, int64_t n_tok) {
  for (int64_t r = r0; r < r0 + nr; ++r) {
    const void* row = w.row(r);
    for (int64_t t = 0; t < n_tok; ++t) {
      float s = 0.0f;
      for (int64_t c = 0; c < w.cols; ++c)
        s += xp[t * ldx + prepared_index<T>(c, w.cols)] * load_one<T>(row, c);
      out[t * ldo + r] = s + (bias ? bias[r] : 0.0f);
    }
  }
}

#endif

}  // namespace

int64_t small_batch_scratch_floats(WeightType type, int64_t n_tok, int64_t n) {
  return type == WeightType::BF16 ? n_tok * n : 0;
}

PreparedActivations small_batch_prepare(const float* x, int64_t ldx, int64_t n_tok, int64_t n,
                                        WeightType type, float* scratch) {
  if (type != WeightType::BF16) return {x, ldx};
  if (scratch == nullptr) {
    // Callers that size no scratch (it used to be optional here) get a per-thread buffer.
    thread_local std::vector<float> buffer;
    buffer.resize(static_cast<size_t>(n_tok * n));
    scratch = buffer.data();
  }
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* src = x + t * ldx;
    float* dst = scratch + t * n;
    int64_t i = 0;
    for (; i + kChunk <= n; i += kChunk)
      for (int j = 0; j < kChunk / 2; ++j) {
        dst[i + j] = src[i + 2 * j];
        dst[i + kChunk / 2 + j] = src[i + 2 * j + 1];
      }
    std::memcpy(dst + i, src + i, static_cast<size_t>(n - i) * sizeof(float));
  }
  return {scratch, n};
}

void small_batch_rows(float* out, int64_t ldo, const PreparedActivations& x, const MatrixView& w,
                      const float* bias, int64_t r0, int64_t nr, int64_t n_tok) {
  switch (w.type) {
    case WeightType::BF16:
      rows_impl<WeightType::BF16>(out, ldo, x.data, x.ld, w, bias, r0, nr, n_tok);
      break;
    case WeightType::F16:
      rows_impl<WeightType::F16>(out, ldo, x.data, x.ld, w, bias, r0, nr, n_tok);
      break;
    case WeightType::F32:
      rows_impl<WeightType::F32>(out, ldo, x.data, x.ld, w, bias, r0, nr, n_tok);
      break;
    case WeightType::Q8_0:
    case WeightType::Q4_0:
      break;  // the int8 kernels (quant_dot.h) handle quantized rows
  }
}

}  // namespace gpstream::kernels
