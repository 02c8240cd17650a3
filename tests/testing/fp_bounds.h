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
#include "kernels/quant_blocks.h"
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

// Σ_j |ŵ_j| |x̂_j| of a quantized row (Q8_0 / Q4_0) and Q8_0 activations, dequantized: the magnitude the fp32
// block sums of a quantized dot round against (the int32 block sums are exact).
inline double quantized_dot_magnitude(const void* w_row, kernels::WeightType type, const kernels::BlockQ8_0* xq,
                                      int64_t n_blocks) {
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

}  // namespace gpstream::testing
