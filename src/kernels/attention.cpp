// Structured-mask attention for one query token.
#include "kernels/attention.h"

#include <cmath>
#include <limits>

#include "kernels/convert.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GPSTREAM_ATTN_AVX2 1
#endif

namespace gpstream::kernels {

void attention_forward_token(float* out, const float* q, const KvRegion& src, const KvRegion& tgt,
                             const AttentionShape& shape, int64_t head_begin, int64_t head_end,
                             float* scores) {
  const int64_t d = shape.head_dim;
  const int64_t group = shape.n_head / shape.n_head_kv;
  const int64_t n_src = src.n_visible, n_tgt = tgt.n_visible, n = n_src + n_tgt;
  for (int64_t h = head_begin; h < head_end; ++h) {
    const float* qh = q + h * d;
    float* oh = out + h * d;
    for (int64_t i = 0; i < d; ++i) oh[i] = 0.0f;
    if (n == 0) continue;
    const int64_t kvh = h / group;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t r = 0; r < n; ++r) {
      const float* k =
          (r < n_src ? src.k + r * shape.kv_stride : tgt.k + (r - n_src) * shape.kv_stride) + kvh * d;
      float s = dot_f32(qh, k, d) * shape.scale;
      if (shape.softcap > 0.0f) s = shape.softcap * std::tanh(s / shape.softcap);
      scores[r] = s;
      if (s > mx) mx = s;
    }
    float sum = 0.0f;
    for (int64_t r = 0; r < n; ++r) {
      scores[r] = std::exp(scores[r] - mx);
      sum += scores[r];
    }
    const float inv = 1.0f / sum;
    auto v_row = [&](int64_t r) {
      return (r < n_src ? src.v + r * shape.kv_stride : tgt.v + (r - n_src) * shape.kv_stride) + kvh * d;
    };
    int64_t i0 = 0;
#ifdef GPSTREAM_ATTN_AVX2
    // 64 output values at a time held in registers over all rows (through memory, each row's update
    // waited on the previous row's stores); the same fused multiply-adds in the same row order.
    for (; i0 + 64 <= d; i0 += 64) {
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
      for (int64_t r = 0; r < n; ++r) {
        const float* v = v_row(r) + i0;
        const __m256 p = _mm256_set1_ps(scores[r] * inv);
        a0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v), a0), a1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 8), a1);
        a2 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 16), a2),
        a3 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 24), a3);
        a4 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 32), a4),
        a5 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 40), a5);
        a6 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 48), a6),
        a7 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 56), a7);
      }
      float* o = oh + i0;
      _mm256_storeu_ps(o, a0), _mm256_storeu_ps(o + 8, a1), _mm256_storeu_ps(o + 16, a2);
      _mm256_storeu_ps(o + 24, a3), _mm256_storeu_ps(o + 32, a4), _mm256_storeu_ps(o + 40, a5);
      _mm256_storeu_ps(o + 48, a6), _mm256_storeu_ps(o + 56, a7);
    }
#endif
    for (int64_t r = 0; r < n; ++r) {
      const float* v = v_row(r);
      const float p = scores[r] * inv;
      for (int64_t i = i0; i < d; ++i) oh[i] += p * v[i];
    }
  }
}

}  // namespace gpstream::kernels
