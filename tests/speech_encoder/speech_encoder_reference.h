// An independent float64 forward of the speech encoder (the operations of docs/speech.md and
// scripts/make-speech-encoder-fixtures, no gpstream kernel): the exact reference that central differences
// of the encoder's loss are taken on.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "speech_encoder/speech_encoder_params.h"

namespace gpstream::testing {

struct SpeechEncoderReference {
  std::vector<double> e;    // encoder output [T2, d_model]
  std::vector<double> out;  // projector output [T3, llm_hidden]
};

inline SpeechEncoderReference speech_encoder_reference(const speech_encoder::SpeechEncoderModel& m,
                                                       const float* mel, int64_t n_frames) {
  const auto& c = m.config();
  const auto& O = m.offsets();
  const float* P = m.data();
  const int64_t K = c.conv_kernel, M = c.n_mels, C = c.conv_channels, D = c.d_model, F = c.n_ff;
  const int64_t H = c.n_head, HD = c.head_dim(), KC = c.conv_module_kernel;
  auto w = [&](size_t off, int64_t i) { return static_cast<double>(P[off + static_cast<size_t>(i)]); };
  auto gelu = [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  // y[t, o] = b[o] + Σ_k Σ_i W[o, k, i] x[2t + 2 - K + k, i] (zero rows before the signal), floor(n / 2)
  // rows.
  auto conv = [&](const std::vector<double>& x, int64_t n, int64_t in, int64_t out, size_t wo, size_t bo) {
    const int64_t n_out = n / 2;
    std::vector<double> y(static_cast<size_t>(n_out * out));
    for (int64_t t = 0; t < n_out; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = w(bo, o);
        for (int64_t k = 0; k < K; ++k) {
          const int64_t r = 2 * t + 2 - K + k;
          if (r < 0) continue;
          for (int64_t i = 0; i < in; ++i)
            s += w(wo, (o * K + k) * in + i) * x[static_cast<size_t>(r * in + i)];
        }
        y[static_cast<size_t>(t * out + o)] = gelu(s);
      }
    return y;
  };
  // y = x Wᵀ for x [T, in], W [out, in].
  auto matmul = [&](const std::vector<double>& x, int64_t T, int64_t in, int64_t out, size_t wo) {
    std::vector<double> y(static_cast<size_t>(T * out));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = 0;
        for (int64_t i = 0; i < in; ++i) s += w(wo, o * in + i) * x[static_cast<size_t>(t * in + i)];
        y[static_cast<size_t>(t * out + o)] = s;
      }
    return y;
  };
  auto rmsnorm = [&](const std::vector<double>& x, int64_t T, size_t go) {
    std::vector<double> y(x.size());
    for (int64_t t = 0; t < T; ++t) {
      double ss = 0;
      for (int64_t i = 0; i < D; ++i)
        ss += x[static_cast<size_t>(t * D + i)] * x[static_cast<size_t>(t * D + i)];
      const double r = 1.0 / std::sqrt(ss / static_cast<double>(D) + static_cast<double>(c.norm_eps));
      for (int64_t i = 0; i < D; ++i)
        y[static_cast<size_t>(t * D + i)] = x[static_cast<size_t>(t * D + i)] * r * w(go, i);
    }
    return y;
  };

  std::vector<double> x0(static_cast<size_t>(n_frames * M));
  for (size_t i = 0; i < x0.size(); ++i)
    x0[i] =
        (static_cast<double>(mel[i]) + static_cast<double>(c.mel_shift)) * static_cast<double>(c.mel_scale);
  const int64_t T1 = n_frames / 2, T = T1 / 2;
  const std::vector<double> y1 = conv(x0, n_frames, M, C, O.conv1_w, O.conv1_b);
  std::vector<double> x = conv(y1, T1, C, D, O.conv2_w, O.conv2_b);
  const int64_t half = HD / 2;
  auto rope = [&](std::vector<double>& v) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const double inv = std::pow(static_cast<double>(c.rope_theta),
                                      -2.0 * static_cast<double>(i) / static_cast<double>(HD));
          const double a = static_cast<double>(t) * inv, cs = std::cos(a), sn = std::sin(a);
          double& p = v[static_cast<size_t>(t * D + h * HD + i)];
          double& q = v[static_cast<size_t>(t * D + h * HD + i + half)];
          const double pa = p, qb = q;
          p = pa * cs - qb * sn;
          q = qb * cs + pa * sn;
        }
  };
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const auto& L = O.layers[static_cast<size_t>(l)];
    std::vector<double> h = rmsnorm(x, T, L.attn_norm);
    std::vector<double> q = matmul(h, T, D, D, L.wq), k = matmul(h, T, D, D, L.wk),
                        v = matmul(h, T, D, D, L.wv);
    rope(q);
    rope(k);
    std::vector<double> att(static_cast<size_t>(T * D), 0.0);
    for (int64_t hh = 0; hh < H; ++hh)
      for (int64_t i = 0; i < T; ++i) {
        const int64_t chunk = i / c.chunk_frames;
        const int64_t lo =
            c.left_chunks <= 0 ? 0 : std::max<int64_t>(0, chunk - c.left_chunks) * c.chunk_frames;
        const int64_t hi = std::min(T, (chunk + 1) * c.chunk_frames);
        std::vector<double> s(static_cast<size_t>(hi - lo));
        double mx = -1e300;
        for (int64_t j = lo; j < hi; ++j) {
          double d = 0;
          for (int64_t e = 0; e < HD; ++e)
            d += q[static_cast<size_t>(i * D + hh * HD + e)] * k[static_cast<size_t>(j * D + hh * HD + e)];
          s[static_cast<size_t>(j - lo)] = d / std::sqrt(static_cast<double>(HD));
          mx = std::max(mx, s[static_cast<size_t>(j - lo)]);
        }
        double z = 0;
        for (double& sv : s) z += (sv = std::exp(sv - mx));
        for (int64_t j = lo; j < hi; ++j)
          for (int64_t e = 0; e < HD; ++e)
            att[static_cast<size_t>(i * D + hh * HD + e)] +=
                s[static_cast<size_t>(j - lo)] / z * v[static_cast<size_t>(j * D + hh * HD + e)];
      }
    const std::vector<double> o = matmul(att, T, D, D, L.wo);
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    if (KC > 0) {
      h = rmsnorm(x, T, L.conv_norm);
      const std::vector<double> a = matmul(h, T, D, 2 * D, L.conv_pw1);
      std::vector<double> g(static_cast<size_t>(T * D)), cv(g.size(), 0.0);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; ++i)
          g[static_cast<size_t>(t * D + i)] =
              a[static_cast<size_t>(t * 2 * D + i)] * sigmoid(a[static_cast<size_t>(t * 2 * D + D + i)]);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < KC; ++j) {
          const int64_t src = t - (KC - 1) + j;
          if (src < 0) continue;
          for (int64_t i = 0; i < D; ++i)
            cv[static_cast<size_t>(t * D + i)] +=
                w(L.conv_dw, i * KC + j) * g[static_cast<size_t>(src * D + i)];
        }
      for (double& cvi : cv) cvi *= sigmoid(cvi);
      const std::vector<double> p2 = matmul(cv, T, D, D, L.conv_pw2);
      for (size_t i = 0; i < x.size(); ++i) x[i] += p2[i];
    }
    h = rmsnorm(x, T, L.ffn_norm);
    std::vector<double> gate = matmul(h, T, D, F, L.w_gate);
    const std::vector<double> up = matmul(h, T, D, F, L.w_up);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] * sigmoid(gate[i]) * up[i];
    const std::vector<double> down = matmul(gate, T, F, D, L.w_down);
    for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  SpeechEncoderReference r;
  r.e = rmsnorm(x, T, O.norm);
  const int64_t T3 = T / c.stack, SD = c.stack * D, PH = c.proj_hidden, LH = c.llm_hidden;
  std::vector<double> hid(static_cast<size_t>(T3 * PH));
  for (int64_t t = 0; t < T3; ++t)
    for (int64_t j = 0; j < PH; ++j) {
      double s = w(O.fc1_b, j);
      for (int64_t i = 0; i < SD; ++i) s += w(O.fc1_w, j * SD + i) * r.e[static_cast<size_t>(t * SD + i)];
      hid[static_cast<size_t>(t * PH + j)] = gelu(s);
    }
  r.out.assign(static_cast<size_t>(T3 * LH), 0.0);
  for (int64_t t = 0; t < T3; ++t)
    for (int64_t o = 0; o < LH; ++o) {
      double s = w(O.fc2_b, o);
      for (int64_t j = 0; j < PH; ++j) s += w(O.fc2_w, o * PH + j) * hid[static_cast<size_t>(t * PH + j)];
      r.out[static_cast<size_t>(t * LH + o)] = s;
    }
  return r;
}

}  // namespace gpstream::testing
