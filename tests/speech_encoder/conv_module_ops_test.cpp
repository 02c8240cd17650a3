// The convolution module's pieces: the causal depthwise convolution on a case worked by hand, and every
// backward as the adjoint of its forward (<J x, y> = <x, J^T y>, with J from central differences for the
// non-linear ones).
#include "speech_encoder/conv_module_ops.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "../testing/fp_bounds.h"

namespace gpstream::speech_encoder {
namespace {

std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Two channels, kernel 3, two outputs; in = [pad0, pad1, x0, x1] per channel.
TEST(ConvModuleOps, DepthwiseConvolutionByHand) {
  const std::vector<float> in = {1, 10, 2, 20, 3, 30, 4, 40};  // rows of [c0, c1]
  const std::vector<float> w = {1, 2, 3, -1, 0, 1};            // [channel, kernel]: c0: 1 2 3; c1: -1 0 1
  std::vector<float> out(4);
  depthwise_conv_causal(out.data(), in.data(), 2, 2, w.data(), 3);
  EXPECT_FLOAT_EQ(out[0], 1 * 1 + 2 * 2 + 3 * 3);      // channel 0, t = 0: rows 0..2
  EXPECT_FLOAT_EQ(out[1], -1 * 10 + 0 * 20 + 1 * 30);  // channel 1, t = 0
  EXPECT_FLOAT_EQ(out[2], 1 * 2 + 2 * 3 + 3 * 4);      // channel 0, t = 1: rows 1..3
  EXPECT_FLOAT_EQ(out[3], -1 * 20 + 0 * 30 + 1 * 40);
}

// The convolution is linear in its input and in its weights: both adjoints by the dot-product identity.
TEST(ConvModuleOps, DepthwiseBackwardIsTheAdjoint) {
  const int64_t n = 7, width = 5, kernel = 4;
  const auto in = randn(static_cast<size_t>((n + kernel - 1) * width), 1);
  const auto w = randn(static_cast<size_t>(width * kernel), 2);
  const auto y = randn(static_cast<size_t>(n * width), 3);
  std::vector<float> out(y.size());
  depthwise_conv_causal(out.data(), in.data(), n, width, w.data(), kernel);
  std::vector<float> d_in(in.size(), 0.0f), d_w(w.size(), 0.0f);
  depthwise_conv_causal_backward(d_in.data(), d_w.data(), y.data(), in.data(), n, width, w.data(), kernel);
  // Both sides are the triple sum Σ_{t,c,k} y[t,c]·w[c,k]·in[t+k,c] (out[t,c] = Σ_k w[c,k] in[t+k,c]), with
  // different fp32 partial sums: out sums `kernel` terms (γ_kernel), d_in `kernel`, d_w `n` per entry;
  // the outer dots are in double. So they differ by ≤ (γ_kernel + γ_max(n,kernel)) · S, S = Σ|y||w||in|.
  double S = 0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < width; ++c)
      for (int64_t k = 0; k < kernel; ++k)
        S += std::fabs(static_cast<double>(y[t * width + c]) * w[c * kernel + k] * in[(t + k) * width + c]);
  const double tol =
      (gpstream::testing::gamma_n(kernel) + gpstream::testing::gamma_n(std::max(n, kernel))) * S;
  EXPECT_NEAR(dot(out, y), dot(in, d_in), tol);
  EXPECT_NEAR(dot(out, y), dot(w, d_w), tol);
}

// GLU and SiLU against central differences of the forward along a random direction
// (testing::central_difference, the step 2^-7 near the optimum of h²|f'''|/6 against fp32 evaluations).
// |f'''| from the form of f over |t| ≤ 2h, with |σ''| ≤ √3/18 and |σ'''| ≤ 1/8: GLU's Σ y·A(t)σ(B(t)) (A, B
// linear in t) has f''' = Σ y (3 A' B'² σ''(B) + A B'³ σ'''(B)); SiLU's Σ y·s(X(t)), s''' = 3σ'' + x σ'''.
// sigmoid(x) = 1/(1 + expf(−x)): expf within 1 ulp (2u), so Δs/s ≤ (1 − s)·2u + 2u ≤ ρ = 4u.
//  - One evaluation of the loss Σ out·y: each out = a·s (or x·s) within (ρ + u)|out|, the point a + t·dir
//    rounded twice (2u(|a| + |t·dir|), through |∂L/∂a| at t = 0 to first order), the double dot γ_N(u₆₄).
//  - The backward (conv_module_ops.cpp): d·s within (ρ + u)|d s|; GLU's d·a·s·(1 − s) within
//    |d a| s ((ρ + 3u)(1 − s) + sρ) (1 − s carries s's error absolutely); SiLU's d·s·(1 + x(1 − s)) within
//    |d| s ((ρ + 3u)|1 + x(1 − s)| + |x|(sρ + 2u(1 − s))); their dot with dir in double.
TEST(ConvModuleOps, GluAndSiluBackwardMatchFiniteDifferences) {
  using gpstream::testing::gamma_n;
  using gpstream::testing::kUnitF32;
  using gpstream::testing::kUnitF64;
  const double u = kUnitF32, rho = 4 * u;
  const float h = 0x1p-7f;
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  // The central difference of loss(t) at t = 0, steps ±h, ±2h, each evaluation within eval(t).
  const double s2 = std::sqrt(3.0) / 18, s3 = 1.0 / 8;
  auto difference = [&](const std::function<double(float)>& loss, const std::function<double(float)>& eval,
                        double third) {
    std::array<double, 5> t{}, fv{};
    double e = 0;
    for (int k = -2; k <= 2; ++k) {
      const float tk = static_cast<float>(k) * h;
      t[static_cast<size_t>(k + 2)] = tk;
      fv[static_cast<size_t>(k + 2)] = loss(tk);
      e = std::max(e, eval(tk));
    }
    return gpstream::testing::central_difference(t, fv, e, third);
  };
  const int64_t n = 3, width = 6;
  const auto a = randn(static_cast<size_t>(n * 2 * width), 4);
  const auto dir = randn(a.size(), 5);
  const auto y = randn(static_cast<size_t>(n * width), 6);
  auto glu_loss = [&](float t) {
    std::vector<float> x(a.size()), out(y.size());
    for (size_t i = 0; i < a.size(); ++i) x[i] = a[i] + t * dir[i];
    glu_forward(out.data(), x.data(), n, width);
    return dot(out, y);
  };
  auto glu_eval = [&](float t) {
    double e = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < width; ++i) {
        const size_t ia = static_cast<size_t>(r * 2 * width + i), ib = ia + static_cast<size_t>(width);
        const double yy = std::fabs(y[r * width + i]), s = sig(a[ib]);
        const double o = std::fabs((a[ia] + double(t) * dir[ia]) * sig(a[ib] + double(t) * dir[ib]));
        e += yy * (rho + u) * o + gamma_n(n * width, kUnitF64) * yy * o;
        e += yy * s * 2 * u * (std::fabs(a[ia]) + std::fabs(t * dir[ia]));
        e += yy * std::fabs(a[ia]) * s * (1 - s) * 2 * u * (std::fabs(a[ib]) + std::fabs(t * dir[ib]));
      }
    return e;
  };
  std::vector<float> d_a(a.size());
  glu_backward(d_a.data(), y.data(), a.data(), n, width);
  double glu_kernel = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < width; ++i) {
      const size_t ia = static_cast<size_t>(r * 2 * width + i), ib = ia + static_cast<size_t>(width);
      const double d = std::fabs(y[r * width + i]), s = sig(a[ib]);
      glu_kernel += std::fabs(dir[ia]) * (rho + u) * d * s +
                    std::fabs(dir[ib]) * d * std::fabs(a[ia]) * s * ((rho + 3 * u) * (1 - s) + s * rho);
      glu_kernel += gamma_n(static_cast<int64_t>(a.size()), kUnitF64) *
                    (std::fabs(d_a[ia] * dir[ia]) + std::fabs(d_a[ib] * dir[ib]));
    }
  double glu_third = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < width; ++i) {
      const size_t ia = static_cast<size_t>(r * 2 * width + i), ib = ia + static_cast<size_t>(width);
      const double da = std::fabs(dir[ia]), db = std::fabs(dir[ib]), A = std::fabs(a[ia]) + 2 * h * da;
      glu_third += std::fabs(y[r * width + i]) * (3 * da * db * db * s2 + A * db * db * db * s3);
    }
  const auto glu = difference(glu_loss, glu_eval, glu_third);
  EXPECT_NEAR(dot(d_a, dir), glu.slope, glu_kernel + glu.error);

  const auto x = randn(static_cast<size_t>(n * width), 7);
  auto silu_loss = [&](float t) {
    std::vector<float> v(x.size()), out(x.size());
    for (size_t i = 0; i < x.size(); ++i) v[i] = x[i] + t * dir[i];
    silu_rows(out.data(), v.data(), n * width);
    return dot(out, y);
  };
  auto silu_eval = [&](float t) {
    double e = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i] + double(t) * dir[i], s = sig(x[i]), yy = std::fabs(y[i]);
      const double o = std::fabs(v * sig(v));
      e += yy * (rho + u) * o + gamma_n(n * width, kUnitF64) * yy * o;
      e += yy * std::fabs(s * (1 + x[i] * (1 - s))) * 2 * u * (std::fabs(x[i]) + std::fabs(t * dir[i]));
    }
    return e;
  };
  std::vector<float> d_x(x.size());
  silu_backward_rows(d_x.data(), y.data(), x.data(), n * width);
  std::vector<float> dir_x(dir.begin(), dir.begin() + static_cast<std::ptrdiff_t>(x.size()));
  double silu_kernel = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = sig(x[i]), xi = x[i];
    silu_kernel +=
        std::fabs(dir_x[i]) * std::fabs(y[i]) * s *
            ((rho + 3 * u) * std::fabs(1 + xi * (1 - s)) + std::fabs(xi) * (s * rho + 2 * u * (1 - s))) +
        gamma_n(static_cast<int64_t>(x.size()), kUnitF64) * std::fabs(d_x[i] * dir_x[i]);
  }
  double silu_third = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = std::fabs(dir[i]);
    silu_third += std::fabs(y[i]) * dx * dx * dx * (3 * s2 + (std::fabs(x[i]) + 2 * h * dx) * s3);
  }
  const auto silu = difference(silu_loss, silu_eval, silu_third);
  EXPECT_NEAR(dot(d_x, dir_x), silu.slope, silu_kernel + silu.error);
  std::vector<float> s(x.size());
  silu_rows(s.data(), x.data(), n * width);
  EXPECT_FLOAT_EQ(s[0], x[0] / (1.0f + std::exp(-x[0])));
}

}  // namespace
}  // namespace gpstream::speech_encoder
