// kernels/gelu.h (a fast_exp sigmoid, eight lanes at a time) against GELU's tanh form and its derivative
// written here in double with libm's tanh, over the vector body, the scalar tail, both saturated ends and in
// place; the gated forward's GELU path against the same reference.
#include "kernels/gelu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../testing/fp_bounds.h"
#include "kernels/activation.h"

namespace gpstream::kernels {
namespace {

double gelu_reference(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double gelu_grad_reference(double x) {
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double th = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3.0 * c * x * x);
}

// fp32 error bounds of gelu_tanh and of its slope against the exact tanh form: testing::gelu_tanh_bound
// (tests/testing/fp_bounds.h, where the derivation is written).
using gpstream::testing::gelu_tanh_bound;

std::vector<float> ramp(int64_t n, float lo, float hi) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return x;
}

TEST(Gelu, RowsMatchTheTanhFormAndItsDerivative) {
  const int64_t n = 2003;  // not a multiple of 8: the scalar tail runs too
  const std::vector<float> x = ramp(n, -15.0f, 15.0f);
  std::vector<float> dy(n);
  for (int64_t i = 0; i < n; ++i) dy[i] = 0.5f + static_cast<float>(i % 7) * 0.25f;
  std::vector<float> y(n), dx(n);
  gelu_tanh_rows(y.data(), x.data(), n);
  gelu_tanh_backward_rows(dx.data(), dy.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double want = gelu_reference(x[i]), dwant = dy[i] * gelu_grad_reference(x[i]);
    const auto b = gelu_tanh_bound(x[i]);
    EXPECT_NEAR(y[i], want, b.y) << "x = " << x[i];
    // dx = dy · slope: the slope's bound times |dy|, and the product's rounding.
    EXPECT_NEAR(dx[i], dwant, std::fabs(dy[i]) * b.slope + gpstream::testing::kUnitF32 * std::fabs(dwant))
        << "x = " << x[i];
    EXPECT_EQ(gelu_tanh(x[i]), y[i]) << "the one-value form differs from the row form at x = " << x[i];
    EXPECT_EQ(dy[i] * gelu_tanh_grad(x[i]), dx[i]) << "x = " << x[i];
  }
  // Saturation: exactly x far right, (almost) 0 far left, no NaN from the clamped exp. At x = −15 the
  // exponent 2k·15(1 + c·225) ≈ 265 is clamped to 88: s = 1/(1 + e^88) ≈ 6.1e-39, within 7u of that
  // (fast_exp's 4u, the sum, the division, the product with x), so |y| ≤ 15·s(1 + 8u); the slope s(1 +
  // |x|·p(1 − s)), p = 2k(1 + 3c·225) < 50, and dy[0] = 0.5 give |dx| ≤ 0.5·751·s(1 + 16u) — far below a
  // saturation bug.
  const double s_clamped = 1.0 / (1.0 + std::exp(88.0)), u = gpstream::testing::kUnitF32;
  EXPECT_EQ(y[n - 1], 15.0f);
  EXPECT_LE(std::abs(y[0]), 15.0 * s_clamped * (1 + 8 * u));
  EXPECT_LE(std::abs(dx[0]), 0.5 * 751.0 * s_clamped * (1 + 16 * u));
  EXPECT_FALSE(std::isnan(gelu_tanh(-1e30f)));
  EXPECT_EQ(gelu_tanh(1e30f), 1e30f);
  // In place.
  std::vector<float> z = x, dz = dy;
  gelu_tanh_rows(z.data(), z.data(), n);
  gelu_tanh_backward_rows(dz.data(), dz.data(), x.data(), n);
  EXPECT_EQ(z, y);
  EXPECT_EQ(dz, dx);
}

TEST(Gelu, GatedForwardMatchesTheReference) {
  const int64_t n_tok = 3, n = 21, ld = 24;  // row stride > n; 21 = two lanes of 8 and a tail of 5
  const std::vector<float> gate = ramp(n_tok * ld, -6.0f, 6.0f), up = ramp(n_tok * ld, 2.0f, -1.0f);
  std::vector<float> out(static_cast<size_t>(n_tok * ld), -7.0f);
  gated_act_forward(out.data(), ld, gate.data(), up.data(), ld, n_tok, n, Activation::GeluTanh);
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t i = 0; i < ld; ++i) {
      const size_t j = static_cast<size_t>(t * ld + i);
      if (i >= n) {
        EXPECT_EQ(out[j], -7.0f) << "wrote past the row's n values";
        continue;
      }
      const double want = gelu_reference(gate[j]) * up[j];
      // gelu_tanh_bound times |up|, and the product's rounding.
      EXPECT_NEAR(
          out[j], want,
          gelu_tanh_bound(gate[j]).y * std::fabs(up[j]) + gpstream::testing::kUnitF32 * std::fabs(want))
          << "t = " << t << ", i = " << i;
    }
  }
}

}  // namespace
}  // namespace gpstream::kernels
