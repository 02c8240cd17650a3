// Rounding-error bound of the speech encoder's forward (speech_encoder/speech_encoder.h, the whole-utterance
// pass, and speech_encoder/speech_encoder_stream.h, the chunked one), in the first-order style of
// forward_bounds.h (fp_bounds.h for the arithmetic): how far one fp32 forward may sit from the exact one, or
// two fp32 forwards that sum in other orders (the stream's few-row linear kernel and per-token attention
// against the pass's sgemm and whole-sequence attention) from each other.
//  - Relative errors add along a chain of roundings (Higham Lemma 3.3), RMSNorm rescales to unit rms and
//    passes the (normwise) relative error on, softmax and P·V are convex combinations: an output whose
//    dependence path crosses dots of lengths n_1..n_m and e elementwise roundings is within γ_{n_1+…+n_m+e}
//    of the magnitude of its last dot's terms. A nonlinearity φ with |φ'| ≤ L carries an input error δ
//    into L·δ: the three tanh-GELUs (|gelu'| ≤ 1.13, the maximum of the tanh form at x ≈ 1.5) scale the
//    count so far by 1.13.
//  - The path (the operations of speech_encoder.cpp, in order):
//      x' = (x + mel_shift)·mel_scale: 2 roundings (the inputs are exact fp32 values), and 1 for the
//        constants (stored in fp32: within u of a reference's decimal values);
//      conv1 as im2col + linear: a dot of K·n_mels terms and the bias; GELU: 6 roundings of |x| (below);
//      conv2: K·conv_channels + 1; GELU;
//      per layer, attention: RMSNorm (its sum of squares, D, and rsqrt, ·1/rms, ·w: 3, and norm_eps stored in
//        fp32: it moves rsqrt(ms + eps) by ≤ u relative: 1), q/k/v (D),
//        RoPE (the fp32 cos/sin table and the rotation: 3), the score q·k (head_dim: q and k carry their
//        error into it like a dot of that length) and its scale (1), softmax (the max subtraction, exp within
//        4u, its sum over the R visible frames, the division: R + 6), P·V (R), o (D), the residual add (1);
//      convolution module (conv_module_kernel > 0): RMSNorm (D + 4), pw1 (D), GLU a·σ(b) (σ = 1/(1 + exp):
//        exp 4u, the add, the division, the product: 7), the causal depthwise dot (its kernel length),
//        SiLU (7), pw2 (D), the residual add (1);
//      FFN: RMSNorm (D + 4), gate/up (D), SiLU(gate)·up (8), down (n_ff), the residual add (1);
//      the final RMSNorm (D + 4); fc1 (stack·D + 1); GELU; fc2 (proj_hidden + 1).
//    GELU (kernels/gelu.h, gelu_tanh_bound in fp_bounds.h): y = x·s within |x|·s(ρ + u), ρ = (1 − s)(γ_7|a| +
//    4u) + 2u; s(1 − s)|a| ≤ 0.23 over all a (its maximum, at |a| ≈ 1.54) and s(1 − s) ≤ 1/4, so
//    |Δy| ≤ (7·0.23 + 4/4 + 3)u|x| (+ e^-88 for the clamp) ≤ 6u|x|, and |y| ≤ |x|: 6 roundings of the
//    magnitude of the dot before it.
//  - Against an exact (float64) reference: RoPE angles are pos·inv_freq in double from fp32 inv_freq (within
//    u of θ^(−2i/head_dim)), off by ≤ pos·u; the rotated pair moves by that angle, a relative error of
//    ≤ pos·u ≤ (T2 − 1)·u for T2 encoder frames. Two fp32 forwards share the table (the same positions and
//    code).
//  - The magnitude of fc2's terms, from the weights: fc1's input is S = stack RMS-normed rows ê·w_norm,
//    ‖ê‖₂ = √D each, so Σ_k |W1_jk||e_k| + |b1_j| ≤ m1_j = Σ_s ‖W1_{j,s} ∘ w_norm‖₂ √D + |b1_j|
//    (Cauchy–Schwarz per stacked block; normed_linear_magnitude's argument), |gelu(x)| ≤ |x| ≤ m1_j, and an
//    upstream error δ·m1_j in fc1's output reaches fc2's output as ≤ 1.13·δ·Σ_j |W2_rj| m1_j. So every output
//    is within γ_N·max_r (Σ_j |W2_rj| m1_j + |b2_r|), N the whole path's count with the slope factors.
//  - The encoder output e = ê·w_norm (before the projector): any entry within γ_{N_e}·√D·max|w_norm|.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fp_bounds.h"
#include "speech_encoder/speech_encoder_params.h"

namespace gpstream::testing {

inline constexpr double kGeluSlope = 1.13;    // max |d/dx gelu_tanh(x)|
inline constexpr int64_t kGeluRoundings = 6;  // the kernel's GELU: ≤ 6u·|x| (derived above)
inline constexpr int64_t kSigmoidProduct = 7;  // a·σ(b) or x·σ(x): exp 4u, 1 + e, the division, the product

// An upper bound on the spectral norm ‖W‖₂ of W [rows, cols] (row-major): with A = WᵀW or WWᵀ (the smaller,
// n × n, in double), ‖W‖₂² = λ_max(A) ≤ ‖A⁸‖_F^(1/8) (A is symmetric positive semidefinite: ‖A⁸‖_F² =
// Σ λ_i¹⁶), at most n^(1/16)·λ_max; A⁸ by three squarings, each rescaled to unit Frobenius norm first.
inline double spectral_norm_bound(const float* w, int64_t rows, int64_t cols) {
  const bool gram_cols = cols <= rows;
  const int64_t n = gram_cols ? cols : rows, m = gram_cols ? rows : cols;
  auto at = [&](int64_t i, int64_t k) {  // element k of "vector" i (a column of W when gram_cols)
    return static_cast<double>(gram_cols ? w[k * cols + i] : w[i * cols + k]);
  };
  std::vector<double> a(static_cast<size_t>(n * n), 0.0), b(a.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = 0;
      for (int64_t k = 0; k < m; ++k) s += at(i, k) * at(j, k);
      a[static_cast<size_t>(i * n + j)] = a[static_cast<size_t>(j * n + i)] = s;
    }
  double log_lambda = 0, weight = 1;  // log λ_max ≤ Σ weight_k·log f_k + weight·log ‖M‖_F
  for (int squaring = 0; squaring < 3; ++squaring) {
    double f = 0;
    for (double v : a) f += v * v;
    f = std::sqrt(f);
    if (f == 0) return 0;
    log_lambda += weight * std::log(f);
    for (double& v : a) v /= f;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < n; ++k)
          s += a[static_cast<size_t>(i * n + k)] * a[static_cast<size_t>(k * n + j)];
        b[static_cast<size_t>(i * n + j)] = s;
      }
    a.swap(b);
    weight /= 2;
  }
  double f = 0;
  for (double v : a) f += v * v;
  log_lambda += weight * std::log(std::sqrt(f));
  // Double rounding in the products and sums is ~n·u₆₄ relative, far below the n^(1/16) slack.
  return std::sqrt(std::exp(log_lambda));
}

struct SpeechEncoderBoundOptions {
  bool against_reference = false;  // one fp32 forward against an exact reference instead of two fp32 forwards
  int64_t n_frames = 0;            // log-mel frames of the utterance (the positions and visible rows)
};

struct SpeechEncoderForwardBound {
  int64_t encoder_roundings = 0;  // the path's count up to the encoder output e (in units of u)
  int64_t roundings = 0;          // … up to the projector's output
  double encoder_magnitude = 0;   // √D·max|w_norm| ≥ any |e_j|
  double encoder_output = 0;      // any entry of e (SpeechEncoderPass::encoder_output())
  double magnitude = 0;           // max_r Σ_j |W2_rj| m1_j + |b2_r|
  double out = 0;                 // any output entry (the smaller of the two bounds below, per output)
};

// The most encoder frames one frame attends to: its chunk and the left_chunks before it (all with 0).
inline int64_t speech_encoder_visible_rows(const speech_encoder::SpeechEncoderConfig& c,
                                           int64_t encoder_frames) {
  const int64_t all = std::max<int64_t>(encoder_frames, 1);
  if (c.left_chunks <= 0) return all;
  return std::min(all, (c.left_chunks + 1) * c.chunk_frames);
}

inline int64_t scale_count(int64_t n, double factor) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(n) * factor));
}

inline SpeechEncoderForwardBound speech_encoder_forward_bound(const speech_encoder::SpeechEncoderModel& m,
                                                              const SpeechEncoderBoundOptions& o) {
  const auto& c = m.config();
  const auto& off = m.offsets();
  const float* P = m.data();
  const int64_t K = c.conv_kernel, M = c.n_mels, C = c.conv_channels, D = c.d_model, F = c.n_ff;
  const int64_t HD = c.head_dim(), KC = c.conv_module_kernel, S = c.stack, PH = c.proj_hidden;
  const int64_t LH = c.llm_hidden;
  const int64_t t2 = std::max<int64_t>(o.n_frames, 0) / 2 / 2;
  const int64_t R = speech_encoder_visible_rows(c, t2);
  const int64_t rope_angle = o.against_reference ? t2 : 0;

  int64_t n = 3;                                                // mel normalisation
  n = scale_count(n + K * M + 1, kGeluSlope) + kGeluRoundings;  // conv1, GELU
  n = scale_count(n + K * C + 1, kGeluSlope) + kGeluRoundings;  // conv2, GELU
  const int64_t attention = (D + 4) + D + (3 + rope_angle) + (HD + 1) + (R + 6) + R + D + 1;
  const int64_t conv_module = KC > 0 ? (D + 4) + D + kSigmoidProduct + KC + kSigmoidProduct + D + 1 : 0;
  const int64_t ffn = (D + 4) + D + (kSigmoidProduct + 1) + F + 1;
  n += c.n_layer * (attention + conv_module + ffn);
  n += D + 4;  // final norm
  SpeechEncoderForwardBound b;
  b.encoder_roundings = n;
  n = scale_count(n + S * D + 1, kGeluSlope) + kGeluRoundings;  // fc1, GELU
  n += PH + 1;                                                  // fc2
  b.roundings = n;

  const float* g = P + off.norm;
  double g_max = 0;
  for (int64_t k = 0; k < D; ++k) g_max = std::max(g_max, std::fabs(static_cast<double>(g[k])));
  std::vector<double> m1(static_cast<size_t>(PH));
  for (int64_t j = 0; j < PH; ++j) {
    const float* w1 = P + off.fc1_w + j * S * D;
    double mj = std::fabs(static_cast<double>(P[off.fc1_b + j]));
    for (int64_t s = 0; s < S; ++s) {
      double ss = 0;
      for (int64_t k = 0; k < D; ++k) {
        const double wg = static_cast<double>(w1[s * D + k]) * g[k];
        ss += wg * wg;
      }
      mj += std::sqrt(ss) * std::sqrt(static_cast<double>(D));
    }
    m1[static_cast<size_t>(j)] = mj;
  }
  // The upstream error normwise (wide projectors): ‖Δs‖₂ ≤ γ_{N_e}·max|w_norm|·√(stack·D) for the stacked
  // normed rows, ‖W1 Δs‖₂ ≤ ‖W1‖₂‖Δs‖₂ (spectral_norm_bound), GELU's slope 1.13, and Δout_r ≤ ‖W2_r‖₂‖Δhid‖₂;
  // the projector's own roundings (fc1's dot and bias, GELU, fc2's dot and bias) componentwise as above:
  // γ_{⌈1.13(S·D + 1)⌉ + 6 + proj_hidden + 1}·(Σ_j |W2_rj| m1_j + |b2_r|). Both bounds hold; each output
  // takes the smaller.
  const double w1_norm = spectral_norm_bound(P + off.fc1_w, PH, S * D);
  const double upstream =
      kGeluSlope * gamma_n(b.encoder_roundings) * w1_norm * g_max * std::sqrt(static_cast<double>(S * D));
  const int64_t local = scale_count(S * D + 1, kGeluSlope) + kGeluRoundings + PH + 1;
  double rel_out = 0;  // max_r of the smaller bound, in units of one side
  for (int64_t r = 0; r < LH; ++r) {
    double mr = std::fabs(static_cast<double>(P[off.fc2_b + r])), w2 = 0;
    for (int64_t j = 0; j < PH; ++j) {
      const double v = static_cast<double>(P[off.fc2_w + r * PH + j]);
      mr += std::fabs(v) * m1[static_cast<size_t>(j)];
      w2 += v * v;
    }
    b.magnitude = std::max(b.magnitude, mr);
    rel_out = std::max(rel_out,
                       std::min(gamma_n(b.roundings) * mr, upstream * std::sqrt(w2) + gamma_n(local) * mr));
  }
  // Two fp32 forwards: each within the bound of the exact one. A float64 reference adds its own rounding,
  // the same count in units of u₆₄.
  const double sides = o.against_reference ? 1.0 : 2.0;
  const double ref = o.against_reference ? 1.0 : 0.0;
  b.encoder_magnitude = std::sqrt(static_cast<double>(D)) * g_max;
  b.encoder_output = (sides * gamma_n(b.encoder_roundings) + ref * gamma_n(b.encoder_roundings, kUnitF64)) *
                     b.encoder_magnitude;
  b.out = sides * rel_out + ref * gamma_n(b.roundings, kUnitF64) * b.magnitude;
  return b;
}

// How many roundings of u one entry of SpeechEncoderPass::backward's fp32 gradient may carry against the
// exact gradient of the same parameters (first order, relative errors add along a chain): the forward's whole
// path (every activation the backward reads is within it), then the backward's chain from the output back to
// the first convolution — fc2ᵀ (llm_hidden), GELU's slope (10: gelu_tanh_bound's slope error is a few u),
// fc1ᵀ (proj_hidden), the d_encoder_output add (1), the final norm's backward (its x̂·dy dot, D, and 6
// elementwise); per layer downᵀ (D), the SwiGLU backward (12), gate/upᵀ (2·n_ff, both into one signal), the
// norm's backward (D + 6), the residual add (1); the convolution module's pw2ᵀ (D), SiLU' (10), the
// depthwise transpose (its kernel), GLU' (10), pw1ᵀ (2D), its norm (D + 6) and add (1); oᵀ (D), attention's
// backward (dP = dO·V: head_dim; dS = P∘(dP − Σ P·dP): the R visible rows and 2; dq, dk or dv: R more; the
// scale: 1), RoPE's inverse (3), q/k/vᵀ (3D into one signal), the norm (D + 6) and add (1); GELU' (10),
// conv2ᵀ (D), col2im (K adds), GELU' (10) — and the last dot of an entry, over at most T1 = n_frames/2 rows,
// with the add into grads (1).
inline int64_t speech_encoder_backward_roundings(const speech_encoder::SpeechEncoderModel& m,
                                                 int64_t n_frames) {
  const auto& c = m.config();
  const int64_t K = c.conv_kernel, D = c.d_model, F = c.n_ff, HD = c.head_dim(), KC = c.conv_module_kernel;
  const int64_t t1 = std::max<int64_t>(n_frames, 0) / 2, R = speech_encoder_visible_rows(c, t1 / 2);
  const int64_t forward =
      speech_encoder_forward_bound(m, {.against_reference = true, .n_frames = n_frames}).roundings;
  const int64_t top = c.llm_hidden + 10 + c.proj_hidden + 1 + D + 6;
  const int64_t ffn = D + 12 + 2 * F + D + 6 + 1;
  const int64_t conv_module = KC > 0 ? D + 10 + KC + 10 + 2 * D + D + 6 + 1 : 0;
  const int64_t attention = D + HD + 2 * R + 2 + 1 + 3 + 3 * D + D + 6 + 1;
  const int64_t subsampling = 10 + D + K + 10;
  return forward + top + c.n_layer * (ffn + conv_module + attention) + subsampling + t1 + 1;
}

// |Σ_i (ĝ_i − g_i) d_i| over one tensor for a fp32 gradient ĝ with relative error gamma: the entries of a
// tensor all sum the same backward signals against the same activations, whose scale (not readable from
// outside the pass) the tensor's largest entry attains unless its own rows cancel, so the bound is normwise
// (Higham: ‖fl(AB) − AB‖ ≤ γ_n ‖|A||B|‖): γ·max_i|ĝ_i|·Σ_i|d_i|.
inline double encoder_gradient_projection_bound(double gamma, const float* grad, const float* dir, size_t n) {
  double g_max = 0, l1 = 0;
  for (size_t i = 0; i < n; ++i) {
    g_max = std::max(g_max, std::fabs(static_cast<double>(grad[i])));
    l1 += std::fabs(static_cast<double>(dir[i]));
  }
  return gamma * g_max * l1;
}

}  // namespace gpstream::testing
