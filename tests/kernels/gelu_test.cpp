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

// fp32 error bounds of gelu_tanh = x·s and of its slope s + x·s(1 − s)·p, with s = 1/(1 + e),
// e = fast_exp(a), a = −2k·x(1 + c x²), p = 2k(1 + 3c x²) (kernels/gelu.h), against the exact tanh form:
//  - a: x², the fused c·x² + 1, ·x, ·(−2k) and the fp32 constants c and k (the scalar form's x + c·x·x·x one
//    more): ≤ γ_7|a| absolute (no cancellation);
//  - e: fast_exp's relative error (~2e-7, as 4u) on top: Δe/e ≤ γ_7|a| + 4u;
//  - s: Δs/s ≤ (1 − s)(Δe/e) + 2u (1 + e and the division);
//  - y = x·s: + u. The slope: 1 − s rounds (u(1 − s)) after carrying Δs, x·s and ·(1 − s) round, p is within
//    γ_5 (x², the fused add, 3c and the constants), and the final fused multiply-add rounds once.
//  fast_exp clamps its argument at 88: where a > 88 the computed s is 1/(1 + e^88) instead of ≈ 0, off by
//  ≤ e^-88 (times |x| in y, times 1 + |x|p in the slope).
//  The double reference 0.5·x·(1 + tanh(z)) itself is only good to ≈ u₆₄ absolute in 1 + tanh (it returns 0
//  once tanh rounds to −1, far left, where the kernel still has e^-a): |x|·u₆₄ in y, (1 + |x|p)·2u₆₄ in the
//  slope.
struct GeluBound {
  double y, slope;
};
GeluBound gelu_bound(double x) {
  using gpstream::testing::gamma_n;
  const double u = gpstream::testing::kUnitF32;
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double a = -2.0 * k * x * (1.0 + c * x * x), e = std::exp(a), s = 1.0 / (1.0 + e), one_minus_s = e / (1.0 + e);
  const double p = 2.0 * k * (1.0 + 3.0 * c * x * x), ax = std::fabs(x);
  const double clamp = a > 88.0 ? std::exp(-88.0) : 0.0;
  const double rho = one_minus_s * (gamma_n(7) * std::fabs(a) + 4 * u) + 2 * u;
  const double ds = s * rho;
  const double ref = gpstream::testing::kUnitF64;
  const double y = ax * s * (rho + u) + ax * clamp + ax * ref;
  const double db = ax * one_minus_s * s * (rho + 2 * u) + ax * s * (ds + u * one_minus_s);
  const double slope = s + x * s * one_minus_s * p;
  const double dslope = db * p + ax * s * one_minus_s * p * gamma_n(5) + ds + u * std::fabs(slope) +
                        (1 + ax * p) * (clamp + 2 * ref);
  return {y, dslope};
}

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
    const GeluBound b = gelu_bound(x[i]);
    EXPECT_NEAR(y[i], want, b.y) << "x = " << x[i];
    // dx = dy · slope: the slope's bound times |dy|, and the product's rounding.
    EXPECT_NEAR(dx[i], dwant, std::fabs(dy[i]) * b.slope + gpstream::testing::kUnitF32 * std::fabs(dwant))
        << "x = " << x[i];
    EXPECT_EQ(gelu_tanh(x[i]), y[i]) << "the one-value form differs from the row form at x = " << x[i];
    EXPECT_EQ(dy[i] * gelu_tanh_grad(x[i]), dx[i]) << "x = " << x[i];
  }
  // Saturation: exactly x far right, (almost) 0 far left, no NaN from the clamped exp.
  EXPECT_EQ(y[n - 1], 15.0f);
  EXPECT_LT(std::abs(y[0]), 1e-30f);
  EXPECT_LT(std::abs(dx[0]), 1e-30f);
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
      // gelu_bound times |up|, and the product's rounding.
      EXPECT_NEAR(out[j], want,
                  gelu_bound(gate[j]).y * std::fabs(up[j]) + gpstream::testing::kUnitF32 * std::fabs(want))
          << "t = " << t << ", i = " << i;
    }
  }
}

}  // namespace
}  // namespace gpstream::kernels
