// Rounding-error bounds that floating-point tolerances in tests are derived from (N. J. Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., ch. 2–3): accumulation length × magnitude × unit roundoff of
// the arithmetic involved, computed from the test's own data where it has it. One set for the whole suite.
//   u: fp32 2^-24, bf16 2^-8, fp16 2^-11 (round to nearest).   γ_n = n·u / (1 − n·u)   (Higham Lemma 3.1)
//   a dot of length n in any summation order, with or without FMA: |fl(aᵀb) − aᵀb| ≤ γ_n Σ|a_i b_i|   (3.5)
//   two evaluations of it in different orders (an SIMD kernel and sgemm, two sgemm blockings) differ by at
//   most twice that, as each is within γ_n of the exact value.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/convert.h"
#include "kernels/quant_blocks.h"
#include "util/error.h"

namespace gpstream::testing {

inline constexpr double kUnitF32 = 0x1p-24;  // fp32 unit roundoff (24-bit significand)
inline constexpr double kUnitBf16 = 0x1p-8;  // bf16 (8-bit significand)
inline constexpr double kUnitF16 = 0x1p-11;  // fp16 (11-bit significand)
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
inline double dot_error_bound(const float* a, const float* b, int64_t n, double u = kUnitF32,
                              int64_t stride_b = 1) {
  return gamma_n(n, u) * abs_dot(a, b, n, stride_b);
}
inline double dot_error_bound(std::span<const float> a, std::span<const float> b, double u = kUnitF32) {
  GPS_ASSERT(a.size() == b.size(), "dot_error_bound: lengths differ");
  return dot_error_bound(a.data(), b.data(), static_cast<int64_t>(a.size()), u);
}

// fp32 error bounds of the tanh-form GELU of kernels/gelu.h, y = x·s, and of its slope s + x·s(1 − s)·p,
// with s = 1/(1 + e), e = fast_exp(a), a = −2k·x(1 + c x²), p = 2k(1 + 3c x²), against the exact tanh form:
//  - a: x², the fused c·x² + 1, ·x, ·(−2k) and the fp32 constants c and k (the scalar form's x + c·x·x·x one
//    more): ≤ γ_7|a| absolute (no cancellation);
//  - e: fast_exp's relative error (~2e-7, as 4u) on top: Δe/e ≤ γ_7|a| + 4u;
//  - s: Δs/s ≤ (1 − s)(Δe/e) + 2u (1 + e and the division);
//  - y = x·s: + u. The slope: 1 − s rounds (u(1 − s)) after carrying Δs, x·s and ·(1 − s) round, p is within
//    γ_5 (x², the fused add, 3c and the constants), and the final fused multiply-add rounds once.
//  fast_exp clamps its argument at 88: where a > 88 the computed s is 1/(1 + e^88) instead of ≈ 0, off by
//  ≤ e^-88 (times |x| in y, times 1 + |x|p in the slope).
//  A double reference 0.5·x·(1 + tanh(z)) is itself only good to ≈ u₆₄ absolute in 1 + tanh (it returns 0
//  once tanh rounds to −1, far left, where the kernel still has e^-a): |x|·u₆₄ in y, (1 + |x|p)·2u₆₄ in the
//  slope, included.
struct GeluTanhBound {
  double y, slope;
};
inline GeluTanhBound gelu_tanh_bound(double x) {
  const double u = kUnitF32;
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double a = -2.0 * k * x * (1.0 + c * x * x), e = std::exp(a), s = 1.0 / (1.0 + e),
               one_minus_s = e / (1.0 + e);
  const double p = 2.0 * k * (1.0 + 3.0 * c * x * x), ax = std::fabs(x);
  const double clamp = a > 88.0 ? std::exp(-88.0) : 0.0;
  const double rho = one_minus_s * (gamma_n(7) * std::fabs(a) + 4 * u) + 2 * u;
  const double ds = s * rho;
  const double ref = kUnitF64;
  const double y = ax * s * (rho + u) + ax * clamp + ax * ref;
  const double db = ax * one_minus_s * s * (rho + 2 * u) + ax * s * (ds + u * one_minus_s);
  const double slope = s + x * s * one_minus_s * p;
  const double dslope = db * p + ax * s * one_minus_s * p * gamma_n(5) + ds + u * std::fabs(slope) +
                        (1 + ax * p) * (clamp + 2 * ref);
  return {y, dslope};
}

// The divided difference f[t_0, …, t_m] = Σ_k w_k f(t_k), w_k = 1 / Π_{i≠k} (t_k − t_i), at distinct points;
// *abs_weights = Σ|w_k|, so evaluations each within e of the exact f give it within e·Σ|w_k|. For points in
// an interval I, m!·f[t_0..t_m] = f⁽ᵐ⁾(ξ) for some ξ ∈ I (the mean value theorem of divided differences).
inline double divided_difference(std::span<const double> t, std::span<const double> fv, double* abs_weights) {
  double d = 0, aw = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    double p = 1;
    for (size_t i = 0; i < t.size(); ++i)
      if (i != k) p *= t[k] - t[i];
    d += fv[k] / p;
    aw += 1.0 / std::fabs(p);
  }
  if (abs_weights) *abs_weights = aw;
  return d;
}

// A central difference of f at 0 and a bound on its distance from f'(0), from five evaluations fv at
// offsets t = {t₋₂ < t₋₁ < 0 < t₁ < t₂} (the steps as actually taken), each within eval_error of the
// exact f. Taylor with the remainder:
//   f[t₋₁, t₁] = f'(0) + f''(0)·(t₁ + t₋₁)/2 + f'''(η)·(t₁² + t₁t₋₁ + t₋₁²)/6,  η ∈ [t₋₁, t₁]
// — the truncation h²·|f'''|/6 for equal steps ±h, plus the f'' term where rounding made them unequal.
// |f'''| is bounded from the function: 6·f[t₋₂, t₋₁, t₁, t₂] = f'''(ξ) for some ξ ∈ [t₋₂, t₂], and f'''
// moves across that interval by ≤ (t₂ − t₋₂)·|f''''|, 24·f[t₋₂..t₂] = f''''(ζ) (f'''' is taken as constant
// over the interval: its variation enters at O(h⁵)); |f''(0)| ≤ |2·f[t₋₁, 0, t₁]| + (t₁ − t₋₁)·|f'''|.
// Rounding: the slope moves by eval_error·Σ|w| = 2·eval_error/(t₁ − t₋₁) (≈ 2γ|f|/(2h) for an objective of
// magnitude |f| evaluated with γ relative error), and each difference above by its own eval_error·Σ|w|.
struct CentralDifference {
  double slope = 0, error = 0;
};
// third_derivative_bound ≥ 0: a bound on |f'''| over [t₋₂, t₂] known from the function's form, used instead
// of the divided differences' (whose own rounding, e·Σ|w| ≈ 16e/h⁴ in the fourth difference, dominates when
// the evaluations are fp32).
inline CentralDifference central_difference(const std::array<double, 5>& t, const std::array<double, 5>& fv,
                                            double eval_error, double third_derivative_bound = -1) {
  GPS_ASSERT(t[0] < t[1] && t[1] < t[2] && t[2] == 0.0 && t[2] < t[3] && t[3] < t[4],
             "central_difference: offsets must increase around 0");
  double w1, w2, w3, w4;
  const std::array<double, 2> t1{t[1], t[3]}, f1{fv[1], fv[3]};
  const std::array<double, 3> t2{t[1], t[2], t[3]}, f2{fv[1], fv[2], fv[3]};
  const std::array<double, 4> t3{t[0], t[1], t[3], t[4]}, f3{fv[0], fv[1], fv[3], fv[4]};
  const double slope = divided_difference(t1, f1, &w1);
  const double d2 = divided_difference(t2, f2, &w2);
  const double d3 = divided_difference(t3, f3, &w3);
  const double d4 = divided_difference(t, fv, &w4);
  const double m4 = 24.0 * (std::fabs(d4) + eval_error * w4);
  const double m3 = third_derivative_bound >= 0
                        ? third_derivative_bound
                        : 6.0 * (std::fabs(d3) + eval_error * w3) + (t[4] - t[0]) * m4;
  const double m2 = 2.0 * (std::fabs(d2) + eval_error * w2) + (t[3] - t[1]) * m3;
  const double trunc = m2 * std::fabs(t[3] + t[1]) / 2 + m3 * (t[3] * t[3] + t[3] * t[1] + t[1] * t[1]) / 6;
  return {slope, trunc + eval_error * w1};
}

// ∂f/∂x for one fp32 variable x of f (restored afterwards) by central_difference at x ± h, x ± 2h, the
// offsets as fp32 rounding leaves them.
inline CentralDifference central_difference(float& x, const std::function<double()>& f, float h,
                                            double eval_error) {
  const float x0 = x;
  std::array<double, 5> t{}, fv{};
  for (int k = -2; k <= 2; ++k) {
    x = x0 + static_cast<float>(k) * h;
    t[static_cast<size_t>(k + 2)] = static_cast<double>(x) - x0;
    fv[static_cast<size_t>(k + 2)] = f();
  }
  x = x0;
  return central_difference(t, fv, eval_error);
}

// A finite-difference step e over θ aimed at h·dir_i / max|dir| along which θ + t·e, t ∈ {0, ±1, ±2}, are all
// fp32 values exactly, so that central_difference's Taylor expansion holds for f(t) = L(θ + t·e) without a
// rounding of the points: e_i is a multiple of θ_i's ulp q (2^-30 for θ_i = 0) with |θ_i| + 2|e_i| at most
// the top of θ_i's binade, where every multiple of q is an fp32 value; each point is checked (0 where not).
inline std::vector<float> exact_fd_step(std::span<const float> theta, std::span<const double> dir, double h) {
  GPS_ASSERT(theta.size() >= dir.size(), "exact_fd_step: fewer values than directions");
  double m = 0;
  for (double v : dir) m = std::max(m, std::fabs(v));
  std::vector<float> e(dir.size(), 0.0f);
  if (m == 0) return e;
  for (size_t i = 0; i < dir.size(); ++i) {
    const double x = theta[i];
    int ex = 0;
    std::frexp(x, &ex);  // |x| in [2^(ex-1), 2^ex)
    const double q = x == 0 ? 0x1p-30 : std::ldexp(1.0, ex - 24), top = x == 0 ? 0x1p-7 : std::ldexp(1.0, ex);
    const double cap = std::floor((top - std::fabs(x)) / (2 * q)) * q;
    const double step = std::clamp(std::round(h * dir[i] / m / q) * q, -cap, cap);
    bool exact = true;
    for (double t : {-2.0, -1.0, 1.0, 2.0}) exact = exact && double(float(x + t * step)) == x + t * step;
    e[i] = exact ? static_cast<float>(step) : 0.0f;
  }
  return e;
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
    if (w.layout == kernels::RowLayout::Paneled16)
      kernels::panel_bf16_read_row(out.data() + r * w.cols, w, r);
    else
      kernels::convert_row(out.data() + r * w.cols, w.row(r), w.type, w.cols);
  }
  return out;
}

// Σ_j |ŵ_j| |x̂_j| of a quantized row (Q8_0 / Q4_0) and Q8_0 activations, dequantized: the magnitude the fp32
// block sums of a quantized dot round against (the int32 block sums are exact).
inline double quantized_dot_magnitude(const void* w_row, kernels::WeightType type,
                                      const kernels::BlockQ8_0* xq, int64_t n_blocks) {
  std::vector<float> w(static_cast<size_t>(n_blocks * 32)), x(w.size());
  kernels::convert_row(w.data(), w_row, type, n_blocks * 32);
  kernels::dequantize_row_q8_0(xq, x.data(), n_blocks * 32);
  return abs_dot(w.data(), x.data(), n_blocks * 32);
}

// One output of a quantized linear (per block d_w·d_x·s_b, summed over n_blocks in fp32, plus the bias)
// against quant_dot_ref + bias (the same terms in its own order): each within γ_{n_blocks+2} of the exact
// sum of the terms (two products and the block sum), the bias adds a rounding on each side.
inline double quantized_linear_bound(double magnitude, int64_t n_blocks, double want) {
  return 2 * gamma_n(n_blocks + 2) * magnitude + 2 * kUnitF32 * std::fabs(want);
}

// How far an SNR measured on an fp32 mix, 10·log10(Σs² / Σ(fl(s + g·n) − s)²) in double, may sit from the
// SNR the mix was scaled to in double: each mixed sample rounds once, e_i ≤ u|s_i + g n_i|, so with
// r = ‖e‖/‖g n‖ ≤ u(‖s‖/‖g n‖ + 1) = u(10^(snr/20) + 1) the noise power moves by a factor within
// 1 ± (2r + r²) (Cauchy–Schwarz): −10·log10(1 − 2r − r²) dB. (The double sums add ~n·u₆₄, far below.)
inline double fp32_mix_snr_bound_db(double snr_db) {
  const double r = kUnitF32 * (std::pow(10.0, snr_db / 20.0) + 1.0);
  return -10.0 * std::log10(1.0 - 2.0 * r - r * r);
}

// The rows of a Q8_0 / Q4_0 matrix dequantized to fp32, plain or interleaved in groups of eight
// (RowLayout::Interleaved8, the layout of kernels/quant_dot.h: per block of a group, the eight fp16
// scales, then quant byte j of row r at 16 + 32·(j/4) + 4r + j%4).
inline std::vector<float> quantized_matrix_rows_f32(const kernels::MatrixView& w) {
  GPS_ASSERT(kernels::is_quantized(w.type), "quantized_matrix_rows_f32: not Q8_0 / Q4_0");
  const size_t bb = w.type == kernels::WeightType::Q8_0 ? kernels::kQ8_0Bytes : kernels::kQ4_0Bytes;
  const int64_t nb = w.cols / 32;
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  std::vector<uint8_t> row(static_cast<size_t>(nb) * bb);
  for (int64_t r = 0; r < w.rows; ++r) {
    if (w.layout == kernels::RowLayout::Interleaved8) {
      const auto* group = static_cast<const uint8_t*>(w.row(r - r % 8));
      const int i = static_cast<int>(r % 8);
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = group + static_cast<size_t>(b) * 8 * bb;
        uint8_t* plain = row.data() + static_cast<size_t>(b) * bb;
        plain[0] = blk[2 * i], plain[1] = blk[2 * i + 1];
        for (size_t j = 0; j + 2 < bb; ++j) plain[2 + j] = blk[16 + 32 * (j / 4) + 4 * i + j % 4];
      }
      kernels::convert_row(out.data() + r * w.cols, row.data(), w.type, w.cols);
    } else {
      kernels::convert_row(out.data() + r * w.cols, w.row(r), w.type, w.cols);
    }
  }
  return out;
}

// How far the logits of two forwards of one quantized model (Q8_0 / Q4_0 head: Q8_0 activations, int8 block
// dots) may differ when everything before the head differs by rounding (two kernels' summation orders, or
// another implementation of the norms, attention and activations). Two facts shape it:
//  - The head reads the final RMSNorm's output x = g ∘ h / rms(h) quantized per block of 32 to Q8_0: the
//    step d = fp16(amax/127), q_j = round(x_j·127/amax). Two forwards whose x agree to a few ulps almost
//    always quantize to the same bits, and then their logits differ by the head's own summation order alone:
//    each side's per-block terms (exact int32 sums times d_w·d_x, a product of two fp16 values, exact in
//    fp32) are accumulated with at most nb + 4 roundings (nb block FMAs, lane halves or eight lanes summed at
//    the end), so |Δz| ≤ 2γ_{nb+4} Σ_j |ŵ_j||x̂_j| (Higham (3.5), one γ per side).
//  - But a rounding may flip: where x_j·127/amax lies within the forwards' difference of a half-integer, q_j
//    moves by one step, x̂_j by d (and when fp16(amax/127) itself rounds the other way, every x̂_j of the
//    block by |q_j|·one fp16 ulp of d ≤ 127·2^-10·d). An element flips with probability about its difference
//    in steps, and a flip anywhere upstream moves the whole residual stream, so the head input may flip in
//    any of its elements; as long as the two head inputs differ by under one step per element, none moves by
//    more than one: |Δx̂_j| ≤ d(1 + 127·2^-10), and |Δz_r| ≤ that · Σ_j |ŵ_rj|. Upstream flips reach the
//    logits only this way: the head input's quantization absorbs whatever does not flip it.
//  Magnitudes from the weights: ‖h / rms(h)‖₂ ≤ √E, so |x_j| ≤ max|g|·√E bounds amax,
//  d ≤ (1 + 2^-11)(1 + u)·max|g|√E / 127, |x̂_j| ≤ (1 + 2^-11)(1 + 3u)(|x_j| + amax/254), and
//  Σ_j |ŵ_rj||x̂_j| ≤ (1 + 2^-11)(1 + 3u)·√E (‖ŵ_r ∘ g‖₂ + max|g|·‖ŵ_r‖₁ / 254). A soft-cap after the head
//  has slope ≤ 1.
struct QuantizedLogitBound {
  double order = 0;  // no rounding flipped: the head's summation order
  double flips = 0;  // every element of the head input one step apart
};
inline QuantizedLogitBound quantized_logit_bound(const kernels::MatrixView& head, std::span<const float> g,
                                                 float g_offset) {
  const std::vector<float> w = quantized_matrix_rows_f32(head);
  const int64_t E = head.cols, nb = E / 32;
  GPS_ASSERT(static_cast<int64_t>(g.size()) == E, "quantized_logit_bound: norm length");
  double g_max = 0;
  for (float v : g) g_max = std::max(g_max, std::fabs(static_cast<double>(v) + g_offset));
  const double root_e = std::sqrt(static_cast<double>(E)), fp16_step = 1 + 0x1p-11;
  const double d_max = fp16_step * (1 + kUnitF32) * g_max * root_e / 127;
  double magnitude = 0, l1_max = 0;
  for (int64_t r = 0; r < head.rows; ++r) {
    double ss = 0, l1 = 0;
    for (int64_t j = 0; j < E; ++j) {
      const double wj = std::fabs(static_cast<double>(w[r * E + j]));
      ss += std::pow(wj * (static_cast<double>(g[j]) + g_offset), 2);
      l1 += wj;
    }
    magnitude = std::max(magnitude, root_e * (std::sqrt(ss) + g_max * l1 / 254));
    l1_max = std::max(l1_max, l1);
  }
  magnitude *= fp16_step * (1 + 3 * kUnitF32);
  return {2 * gamma_n(nb + 4) * magnitude, d_max * (1 + 127 * 0x1p-10) * l1_max};
}

}  // namespace gpstream::testing
