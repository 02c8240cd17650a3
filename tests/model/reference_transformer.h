// A second, deliberately naive implementation of the decoder forward pass for tests: double precision,
// no cache, a dense boolean mask over the whole token list, weights read element by element. It shares
// no code with src/model or src/kernels beyond reading tensors, so agreement means something.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "io/tensor.h"
#include "model/model_config.h"
#include "model/tensor_names.h"

namespace gpstream::testing {

struct RefToken {
  int id;
  double pos;
};

// Attention probabilities of a reference forward: [layer][head][token i][token j] (0 where i does not see j).
using RefAttention = std::vector<std::vector<std::vector<std::vector<double>>>>;

// mask[i][j] = token i attends to token j. Returns logits [n_tok][n_vocab]; with `attention`, also every
// layer's attention probabilities.
inline std::vector<std::vector<double>> reference_forward(const model::ModelConfig& c, const io::TensorMap& w,
                                                          const std::vector<RefToken>& toks,
                                                          const std::vector<std::vector<bool>>& mask,
                                                          RefAttention* attention = nullptr) {
  using model::hf_name;
  using model::TensorId;
  const int T = static_cast<int>(toks.size()), E = c.n_embd, D = c.head_dim, H = c.n_head, HKV = c.n_head_kv;
  auto get = [&](const std::string& n) { return io::tensor_to_f32(*w.find(n)); };
  auto matvec = [](const std::vector<float>& W, int rows, int cols, const std::vector<double>& x) {
    std::vector<double> y(rows, 0.0);
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < cols; ++k) y[r] += static_cast<double>(W[static_cast<size_t>(r) * cols + k]) * x[k];
    return y;
  };
  auto rms = [&](const std::vector<double>& x, const std::vector<float>& g) {
    double ss = 0;
    for (double v : x) ss += v * v;
    double inv = 1.0 / std::sqrt(ss / x.size() + c.norm_eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * g[i];
    return y;
  };
  std::vector<float> inv_freq = c.rope_inv_freq();
  auto rope = [&](std::vector<double>& v, int heads, double pos) {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < D / 2; ++i) {
        double a = pos * inv_freq[i], x1 = v[h * D + i], x2 = v[h * D + i + D / 2];
        v[h * D + i] = x1 * std::cos(a) - x2 * std::sin(a);
        v[h * D + i + D / 2] = x2 * std::cos(a) + x1 * std::sin(a);
      }
  };
  if (attention)
    attention->assign(c.n_layer, std::vector<std::vector<std::vector<double>>>(
                                     H, std::vector<std::vector<double>>(T, std::vector<double>(T, 0.0))));
  std::vector<float> emb = get(hf_name(TensorId::TokEmbd));
  std::vector<std::vector<double>> x(T, std::vector<double>(E));
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < E; ++i) x[t][i] = emb[static_cast<size_t>(toks[t].id) * E + i];
  for (int l = 0; l < c.n_layer; ++l) {
    auto wq = get(hf_name(TensorId::AttnQ, l)), wk = get(hf_name(TensorId::AttnK, l)),
         wv = get(hf_name(TensorId::AttnV, l)), wo = get(hf_name(TensorId::AttnOut, l));
    auto n1 = get(hf_name(TensorId::AttnNorm, l)), n2 = get(hf_name(TensorId::FfnNorm, l));
    std::vector<std::vector<double>> q(T), k(T), v(T);
    for (int t = 0; t < T; ++t) {
      auto h = rms(x[t], n1);
      q[t] = matvec(wq, H * D, E, h);
      k[t] = matvec(wk, HKV * D, E, h);
      v[t] = matvec(wv, HKV * D, E, h);
      if (c.qkv_bias) {
        auto bq = get(hf_name(TensorId::AttnQBias, l)), bk = get(hf_name(TensorId::AttnKBias, l)),
             bv = get(hf_name(TensorId::AttnVBias, l));
        for (int i = 0; i < H * D; ++i) q[t][i] += bq[i];
        for (int i = 0; i < HKV * D; ++i) k[t][i] += bk[i], v[t][i] += bv[i];
      }
      rope(q[t], H, toks[t].pos);
      rope(k[t], HKV, toks[t].pos);
    }
    std::vector<std::vector<double>> attn(T, std::vector<double>(H * D, 0.0));
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        int kh = h / (H / HKV);
        std::vector<double> s(T, -INFINITY);
        double mx = -INFINITY;
        for (int j = 0; j < T; ++j) {
          if (!mask[t][j]) continue;
          double d = 0;
          for (int i = 0; i < D; ++i) d += q[t][h * D + i] * k[j][kh * D + i];
          s[j] = d / std::sqrt(static_cast<double>(D));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < T; ++j) sum += mask[t][j] ? std::exp(s[j] - mx) : 0.0;
        for (int j = 0; j < T; ++j)
          if (mask[t][j]) {
            const double p = std::exp(s[j] - mx) / sum;
            if (attention) (*attention)[l][h][t][j] = p;
            for (int i = 0; i < D; ++i) attn[t][h * D + i] += p * v[j][kh * D + i];
          }
      }
    for (int t = 0; t < T; ++t) {
      auto o = matvec(wo, E, H * D, attn[t]);
      for (int i = 0; i < E; ++i) x[t][i] += o[i];
      auto h = rms(x[t], n2);
      auto g = matvec(get(hf_name(TensorId::FfnGate, l)), c.n_ff, E, h);
      auto u = matvec(get(hf_name(TensorId::FfnUp, l)), c.n_ff, E, h);
      for (int i = 0; i < c.n_ff; ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      auto d = matvec(get(hf_name(TensorId::FfnDown, l)), E, c.n_ff, g);
      for (int i = 0; i < E; ++i) x[t][i] += d[i];
    }
  }
  auto out = get(c.tie_word_embeddings ? hf_name(TensorId::TokEmbd) : hf_name(TensorId::Output));
  auto nf = get(hf_name(TensorId::OutputNorm));
  std::vector<std::vector<double>> logits(T);
  for (int t = 0; t < T; ++t) logits[t] = matvec(out, c.n_vocab, E, rms(x[t], nf));
  return logits;
}

// Σ over the rows r with labels[r] ≥ 0 of the cross-entropy log Σ_v e^{z_rv} − z_r,labels[r] (in double, max
// subtracted), and the number of such rows.
struct LabelLoss {
  double sum = 0;
  int64_t rows = 0;
};
inline LabelLoss reference_label_loss(const std::vector<std::vector<double>>& logits,
                                      const std::vector<int32_t>& labels) {
  LabelLoss l;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (labels[i] < 0) continue;
    double m = -1e300, z = 0;
    for (double v : logits[i]) m = std::max(m, v);
    for (double v : logits[i]) z += std::exp(v - m);
    l.sum += m + std::log(z) - logits[i][static_cast<size_t>(labels[i])];
    ++l.rows;
  }
  return l;
}

}  // namespace gpstream::testing
