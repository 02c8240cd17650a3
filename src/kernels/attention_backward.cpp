// Sequence attention forward (saving probabilities) and backward.
#include "kernels/attention_backward.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/fast_exp.h"

namespace gpstream::kernels {

void attention_mask_build(float* mask, const uint8_t* groups, const int32_t* n_src, const int32_t* n_tgt,
                          int64_t n_tok, int64_t window) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<int32_t> rank(static_cast<size_t>(n_tok));
  int32_t counts[2] = {0, 0};
  for (int64_t j = 0; j < n_tok; ++j) rank[j] = counts[groups[j] ? 1 : 0]++;
  for (int64_t i = 0; i < n_tok; ++i) {
    float* m = mask + i * n_tok;
    for (int64_t j = 0; j < n_tok; ++j) {
      const int32_t limit = groups[j] ? n_tgt[i] : n_src[i];
      const bool visible = rank[j] < limit && (window <= 0 || rank[j] >= limit - window);
      m[j] = visible ? 0.0f : -inf;
    }
  }
}

namespace {

constexpr int64_t kRowBlock = 64;

// One past the largest visible key of rows [r0, r1).
int64_t block_end(const int32_t* row_end, int64_t r0, int64_t r1, int64_t n_tok) {
  if (!row_end) return n_tok;
  int64_t e = 0;
  for (int64_t i = r0; i < r1; ++i) e = std::max<int64_t>(e, row_end[i]);
  return e;
}

}  // namespace

void attention_row_end(int32_t* row_end, const float* mask, int64_t n_tok) {
  for (int64_t i = 0; i < n_tok; ++i) {
    int64_t e = n_tok;
    while (e > 0 && std::isinf(mask[i * n_tok + e - 1])) --e;
    row_end[i] = static_cast<int32_t>(e);
  }
}

void attention_forward_seq(float* out, int64_t ldo, float* probs, const float* q, int64_t ldq, const float* k,
                           const float* v, int64_t ldkv, const float* mask, int64_t n_tok, int64_t head_dim,
                           float scale, const int32_t* row_end, float softcap) {
  const int T = static_cast<int>(n_tok), D = static_cast<int>(head_dim);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t r0 = 0; r0 < n_tok; r0 += kRowBlock) {
    const int64_t r1 = std::min(n_tok, r0 + kRowBlock);
    const int R = static_cast<int>(r1 - r0);
    const int64_t kb = block_end(row_end, r0, r1, n_tok);
    if (kb == 0) {
      for (int64_t i = r0; i < r1; ++i) {
        std::fill(probs + i * n_tok, probs + i * n_tok + n_tok, 0.0f);
        std::fill(out + i * ldo, out + i * ldo + head_dim, 0.0f);
      }
      continue;
    }
    const int K = static_cast<int>(kb);
    float* pb = probs + r0 * n_tok;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, K, D, scale, q + r0 * ldq, static_cast<int>(ldq),
                k, static_cast<int>(ldkv), 0.0f, pb, T);
    for (int64_t i = r0; i < r1; ++i) {
      float* p = probs + i * n_tok;
      const float* m = mask + i * n_tok;
      float mx = ninf;
      if (softcap > 0.0f)
        for (int64_t j = 0; j < kb; ++j) p[j] = softcap * std::tanh(p[j] / softcap);
      for (int64_t j = 0; j < kb; ++j) {
        p[j] += m[j];
        mx = std::max(mx, p[j]);
      }
      if (mx == ninf) {
        std::fill(p, p + kb, 0.0f);
        continue;
      }
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < kb; ++j) {
        p[j] = fast_exp(p[j] - mx);
        sum += p[j];
      }
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < kb; ++j) p[j] *= inv;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, D, K, 1.0f, pb, T, v, static_cast<int>(ldkv),
                0.0f, out + r0 * ldo, static_cast<int>(ldo));
  }
}

void attention_backward_seq(float* dq, int64_t lddq, float* dk, float* dv, int64_t lddkv, float* scratch,
                            const float* dout, int64_t lddo, const float* probs, const float* q, int64_t ldq,
                            const float* k, const float* v, int64_t ldkv, int64_t n_tok, int64_t head_dim,
                            float scale, const int32_t* row_end, float softcap) {
  const int T = static_cast<int>(n_tok), D = static_cast<int>(head_dim);
  for (int64_t r0 = 0; r0 < n_tok; r0 += kRowBlock) {
    const int64_t r1 = std::min(n_tok, r0 + kRowBlock);
    const int R = static_cast<int>(r1 - r0);
    const int64_t kb = block_end(row_end, r0, r1, n_tok);
    if (kb == 0) continue;
    const int K = static_cast<int>(kb);
    const float* pb = probs + r0 * n_tok;
    float* sb = scratch + r0 * n_tok;
    // dP = dout vᵀ
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, K, D, 1.0f, dout + r0 * lddo,
                static_cast<int>(lddo), v, static_cast<int>(ldkv), 0.0f, sb, T);
    for (int64_t i = 0; i < R; ++i) {
      const float* p = pb + i * n_tok;
      float* ds = sb + i * n_tok;
      float dot = 0.0f;
      for (int64_t j = 0; j < kb; ++j) dot += p[j] * ds[j];
      for (int64_t j = 0; j < kb; ++j) ds[j] = p[j] * (ds[j] - dot);
    }
    if (softcap > 0.0f) {
      // dS = dC · (1 − tanh²(S/cap)), S recomputed into the second half of the scratch.
      float* raw = scratch + n_tok * n_tok + r0 * n_tok;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, K, D, scale, q + r0 * ldq,
                  static_cast<int>(ldq), k, static_cast<int>(ldkv), 0.0f, raw, T);
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < kb; ++j) {
          const float th = std::tanh(raw[i * n_tok + j] / softcap);
          sb[i * n_tok + j] *= 1.0f - th * th;
        }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, D, K, scale, sb, T, k, static_cast<int>(ldkv),
                1.0f, dq + r0 * lddq, static_cast<int>(lddq));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, D, R, scale, sb, T, q + r0 * ldq,
                static_cast<int>(ldq), 1.0f, dk, static_cast<int>(lddkv));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, D, R, 1.0f, pb, T, dout + r0 * lddo,
                static_cast<int>(lddo), 1.0f, dv, static_cast<int>(lddkv));
  }
}

void attention_forward_seq_ref(float* out, int64_t ldo, float* probs, const float* q, int64_t ldq,
                               const float* k, const float* v, int64_t ldkv, const float* mask, int64_t n_tok,
                               int64_t head_dim, float scale, float softcap) {
  std::vector<double> s(static_cast<size_t>(n_tok));
  for (int64_t i = 0; i < n_tok; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n_tok; ++j) {
      double d = 0.0;
      for (int64_t c = 0; c < head_dim; ++c) d += static_cast<double>(q[i * ldq + c]) * k[j * ldkv + c];
      d *= scale;
      if (softcap > 0.0f) d = softcap * std::tanh(d / softcap);
      s[j] = std::isinf(mask[i * n_tok + j]) ? -std::numeric_limits<double>::infinity() : d;
      mx = std::max(mx, s[j]);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n_tok; ++j) {
      s[j] = std::isinf(mx) ? 0.0 : std::exp(s[j] - mx);
      sum += s[j];
    }
    for (int64_t j = 0; j < n_tok; ++j) {
      s[j] = sum > 0 ? s[j] / sum : 0.0;
      if (probs) probs[i * n_tok + j] = static_cast<float>(s[j]);
    }
    for (int64_t c = 0; c < head_dim; ++c) {
      double o = 0.0;
      for (int64_t j = 0; j < n_tok; ++j) o += s[j] * v[j * ldkv + c];
      out[i * ldo + c] = static_cast<float>(o);
    }
  }
}

}  // namespace gpstream::kernels
