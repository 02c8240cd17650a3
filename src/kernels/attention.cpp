// Structured-mask attention for one query token.
#include "kernels/attention.h"

#include <cmath>
#include <limits>

#include "kernels/convert.h"

namespace gpstream::kernels {

void attention_forward_token(float* out, const float* q, const KvRegion& src, const KvRegion& tgt,
                             const AttentionShape& shape, int64_t head_begin, int64_t head_end, float* scores) {
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
      const float* k = (r < n_src ? src.k + r * shape.kv_stride : tgt.k + (r - n_src) * shape.kv_stride) + kvh * d;
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
    for (int64_t r = 0; r < n; ++r) {
      const float* v = (r < n_src ? src.v + r * shape.kv_stride : tgt.v + (r - n_src) * shape.kv_stride) + kvh * d;
      const float p = scores[r] * inv;
      for (int64_t i = 0; i < d; ++i) oh[i] += p * v[i];
    }
  }
}

}  // namespace gpstream::kernels
