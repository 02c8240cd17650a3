// Rounding-error bounds that floating-point tolerances in tests are derived from (N. J. Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., ch. 2–3): accumulation length × magnitude × unit roundoff of
// the arithmetic involved, computed from the test's own data where it has it. One set for the whole suite.
//   u: fp32 2^-24, bf16 2^-8, fp16 2^-11 (round to nearest).   γ_n = n·u / (1 − n·u)   (Higham Lemma 3.1)
//   a dot of length n in any summation order, with or without FMA: |fl(aᵀb) − aᵀb| ≤ γ_n Σ|a_i b_i|   (3.5)
//   two evaluations of it in different orders (an SIMD kernel and sgemm, two sgemm blockings) differ by at
//   most twice that, as each is within γ_n of the exact value.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/convert.h"
#include "model/model_config.h"
#include "model/weights.h"
#include "util/error.h"

namespace gpstream::testing {

inline constexpr double kUnitF32 = 0x1p-24;   // fp32 unit roundoff (24-bit significand)
inline constexpr double kUnitBf16 = 0x1p-8;   // bf16 (8-bit significand)
inline constexpr double kUnitF16 = 0x1p-11;   // fp16 (11-bit significand)
inline constexpr double kUnitF64 = 0x1p-53;

// γ_n (Higham Lemma 3.1): the bound on |θ_n| for n roundings of unit roundoff u.
inline double gamma_n(int64_t n, double u = kUnitF32) {
  const double nu = static_cast<double>(n) * u;
  GPS_ASSERT(nu < 1.0, "gamma_n: n·u must be below 1");
  return nu / (1.0 - nu);
}

// A value computed with `roundings` roundings of relative size u (amplifications counted in): within
// roundings · u · |exact| of the exact value, to first order.
inline double rounding_bound(double exact, double roundings, double u = kUnitF32) {
  return roundings * u * std::fabs(exact);
}

// Σ|a_i b_i| (the magnitude a dot's rounding error scales with), in double.
inline double abs_dot(const float* a, const float* b, int64_t n, int64_t stride_b = 1) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(a[i]) * b[i * stride_b]);
  return s;
}

// |fl(aᵀb) − aᵀb| ≤ γ_n Σ|a_i b_i| (Higham (3.5)), any order; stride_b walks a column.
inline double dot_error_bound(const float* a, const float* b, int64_t n, double u = kUnitF32, int64_t stride_b = 1) {
  return gamma_n(n, u) * abs_dot(a, b, n, stride_b);
}
inline double dot_error_bound(std::span<const float> a, std::span<const float> b, double u = kUnitF32) {
  GPS_ASSERT(a.size() == b.size(), "dot_error_bound: lengths differ");
  return dot_error_bound(a.data(), b.data(), static_cast<int64_t>(a.size()), u);
}

// One output of an fp32 linear layer, x·w (+ bias), against a reference summed in double and rounded to fp32
// (kernels' *_ref): the kernel's γ_{n+1}(Σ|x_i w_i| + |bias|) plus the reference's final rounding u·|want|.
inline double linear_output_bound(const float* x, const float* w, int64_t n, double bias, double want,
                                  int64_t stride_w = 1) {
  return gamma_n(n + 1) * (abs_dot(x, w, n, stride_w) + std::fabs(bias)) + kUnitF32 * std::fabs(want);
}

// |fl(Σ x_i) − Σ x_i| ≤ γ_{n−1} Σ|x_i| (Higham (4.4)), any order.
inline double sum_error_bound(std::span<const float> x, double u = kUnitF32) {
  double s = 0;
  for (float v : x) s += std::fabs(v);
  return gamma_n(std::max<int64_t>(1, static_cast<int64_t>(x.size()) - 1), u) * s;
}

// Max over rows r of Σ_j |W_rj| |x_j| for the matrix product y = W x (W: rows × cols, row-major).
inline double max_row_abs_dot(const float* w, int64_t rows, int64_t cols, const float* x) {
  double m = 0;
  for (int64_t r = 0; r < rows; ++r) m = std::max(m, abs_dot(w + r * cols, x, cols));
  return m;
}

// The weight matrix as fp32 rows (any stored precision; panels read back).
inline std::vector<float> matrix_rows_f32(const kernels::MatrixView& w) {
  GPS_ASSERT(!kernels::is_quantized(w.type), "matrix_rows_f32: quantized weights");
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    if (w.rows_paneled16) kernels::panel_bf16_read_row(out.data() + r * w.cols, w, r);
    else kernels::convert_row(out.data() + r * w.cols, w.row(r), w.type, w.cols);
  }
  return out;
}

// max_r ‖W_r ∘ g‖₂ · √E: a bound on Σ_j |W_rj| |x̂_j| for x̂ = g ∘ h / rms(h) over any h, as
// ‖h / rms(h)‖₂ ≤ √E (Cauchy–Schwarz) — the magnitude of a linear layer fed by an RMSNorm.
inline double normed_linear_magnitude(const kernels::MatrixView& w, std::span<const float> g, float g_offset,
                                      std::span<const float> bias = {}) {
  const std::vector<float> rows = matrix_rows_f32(w);
  double m = 0;
  for (int64_t r = 0; r < w.rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < w.cols; ++j) {
      const double wg = static_cast<double>(rows[r * w.cols + j]) * (g[j] + g_offset);
      ss += wg * wg;
    }
    const double b = bias.empty() ? 0.0 : std::fabs(bias[r]);
    m = std::max(m, std::sqrt(ss) * std::sqrt(static_cast<double>(w.cols)) + b);
  }
  return m;
}

// How far two fp32 forwards of one model over the same rows may differ when they sum the linear layers in
// different orders (a per-step forward on the few-token kernel against one batched forward on OpenBLAS
// sgemm, whose kernel — Haswell or SkylakeX — depends on the CPU), or one fp32 forward from an exact
// (double) reference: per layer, the cached K and V entries, and the logits.
//  - Two fp32 forwards run the same per-row code for norms, RoPE, attention and activations, so identical
//    inputs give identical bits; only the linear layers' dots are summed in other orders: each output
//    differs by ≤ 2γ_n Σ|W_rj||x_j| (Higham (3.5), both within γ_n of exact). Against a reference every
//    operation rounds once (one γ, not two), the norms' sums of squares (n_embd each), softmax's sum and
//    P·V (the visible rows each) and a few ulps of elementwise work per layer (kElementwiseRoundings)
//    count too; RoPE angles are taken in double (kernels/rope.cpp), so RoPE adds only its table's and its
//    rotation's roundings.
//  - To first order, relative errors add along a chain of roundings (Higham Lemma 3.3: (1+θ_j)(1+θ_k) =
//    1+θ_{j+k}), and RMSNorm rescales its input to unit rms, passing the relative error on. So an entry
//    whose dependence path crosses dots of lengths n_1..n_m has relative error ≤ γ_{n_1+…+n_m} of the
//    magnitude of the last dot. Each layer adds q/k/v (n_embd), the score q·k (head_dim: q and k carry
//    their error into it like a dot of that length; softmax and P·V are convex combinations), o
//    (n_head·head_dim), gate/up (n_embd) and down (n_ff).
//  - The last dot's magnitude Σ_j |W_rj||x̂_j| ≤ max_r ‖W_r ∘ g‖₂ √E (normed_linear_magnitude). RoPE mixes
//    pairs (|cos| + |sin| ≤ √2) and scales by the rope scale; Gemma 2's soft-caps (c·tanh(x/c)) have slope
//    ≤ 1 and its embedding scale is undone by the first norm.
struct ForwardOrderBound {
  std::vector<double> k, v;  // per layer, any entry of the cached K / V
  double logits = 0;         // any logit
};

struct ForwardBoundOptions {
  bool against_reference = false;  // one fp32 forward against an exact reference instead of two fp32 forwards
  int64_t max_rows = 0;            // against a reference: the most rows one row attends to
};

// Elementwise roundings per layer outside the dots when the two sides do not share code: exp (fast_exp,
// ≈ 2e-7 ≈ 4u), the softmax division, rsqrt of the norms, the RoPE table and rotation (3), SiLU/GELU (exp
// and a division), the gate·up product, soft-cap tanh, the residual adds: 16 roundings of u.
inline constexpr int64_t kElementwiseRoundings = 16;

inline ForwardOrderBound forward_order_bound(const model::ModelConfig& c, const model::Weights& w,
                                             const ForwardBoundOptions& o = {}) {
  const int64_t E = c.n_embd, Q = static_cast<int64_t>(c.n_head) * c.head_dim;
  int64_t per_layer = E + c.head_dim + Q + E + c.n_ff;
  int64_t before_kv = 0, before_head = 0;  // the norm feeding K/V or the LM head, against a reference
  if (o.against_reference) {
    const int64_t norms = c.sandwich_norms ? 4 : 2;
    per_layer += norms * E + 2 * o.max_rows + kElementwiseRoundings;
    before_kv = E + kElementwiseRoundings;
    before_head = E + kElementwiseRoundings;
  }
  const double sides = o.against_reference ? 1.0 : 2.0;
  const float off = c.norm_weight_offset;
  const double rope_gain = std::sqrt(2.0) * std::max(1.0f, c.rope_scaling.attention_factor);
  ForwardOrderBound b;
  for (int l = 0; l < c.n_layer; ++l) {
    const auto& L = w.layers[static_cast<size_t>(l)];
    const double rel = sides * gamma_n(l * per_layer + before_kv + E);
    b.k.push_back(rel * rope_gain * normed_linear_magnitude(L.wk, L.attn_norm, off, L.bk));
    b.v.push_back(rel * normed_linear_magnitude(L.wv, L.attn_norm, off, L.bv));
  }
  b.logits = sides * gamma_n(c.n_layer * per_layer + before_head + E) *
             normed_linear_magnitude(w.output, w.output_norm, off);
  return b;
}

}  // namespace gpstream::testing
