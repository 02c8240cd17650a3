// Grouped-query attention for one query token over a structured mask: the token sees the first n_src
// rows of its sequence's source region and the first n_tgt rows of its target region (gpe.md §4, §6).
// Regions hold keys after RoPE, rows of [n_head_kv * head_dim]. Softmax is fp32 with max subtraction;
// an optional soft-cap (Gemma 2) maps a score s to cap·tanh(s/cap) before the softmax.
#pragma once

#include <cstdint>

namespace gpstream::kernels {

struct KvRegion {
  const float* k = nullptr;  // [rows, kv_stride]
  const float* v = nullptr;
  int64_t n_visible = 0;  // rows this query sees (a prefix of the region)
};

struct AttentionShape {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t kv_stride = 0;  // floats between consecutive K/V rows (n_head_kv * head_dim)
  float scale = 1.0f;     // 1/sqrt(head_dim) unless the model says otherwise
  float softcap = 0.0f;   // 0 = none
};

// out: [n_head * head_dim]; q: [n_head * head_dim]; scores: scratch of n_src + n_tgt floats.
// Heads [head_begin, head_end) only (callers split heads across threads). A query that sees no row
// gets zeros.
void attention_forward_token(float* out, const float* q, const KvRegion& src, const KvRegion& tgt,
                             const AttentionShape& shape, int64_t head_begin, int64_t head_end,
                             float* scores);

}  // namespace gpstream::kernels
