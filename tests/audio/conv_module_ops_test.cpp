// The convolution module's pieces: the causal depthwise convolution on a case worked by hand, and every
// backward as the adjoint of its forward (<J x, y> = <x, J^T y>, with J from central differences for the
// non-linear ones).
#include "audio/conv_module_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../testing/fp_bounds.h"

namespace gpstream::audio {
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
  const double tol = (gpstream::testing::gamma_n(kernel) + gpstream::testing::gamma_n(std::max(n, kernel))) * S;
  EXPECT_NEAR(dot(out, y), dot(in, d_in), tol);
  EXPECT_NEAR(dot(out, y), dot(w, d_w), tol);
}

// GLU and SiLU against central differences of the forward along a random direction.
TEST(ConvModuleOps, GluAndSiluBackwardMatchFiniteDifferences) {
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
  std::vector<float> d_a(a.size());
  glu_backward(d_a.data(), y.data(), a.data(), n, width);
  const float eps = 1e-2f;
  EXPECT_NEAR(dot(d_a, dir), (glu_loss(eps) - glu_loss(-eps)) / (2 * eps), 1e-3);

  const auto x = randn(static_cast<size_t>(n * width), 7);
  auto silu_loss = [&](float t) {
    std::vector<float> v(x.size()), out(x.size());
    for (size_t i = 0; i < x.size(); ++i) v[i] = x[i] + t * dir[i];
    silu_rows(out.data(), v.data(), n * width);
    return dot(out, y);
  };
  std::vector<float> d_x(x.size());
  silu_backward_rows(d_x.data(), y.data(), x.data(), n * width);
  std::vector<float> dir_x(dir.begin(), dir.begin() + static_cast<std::ptrdiff_t>(x.size()));
  EXPECT_NEAR(dot(d_x, dir_x), (silu_loss(eps) - silu_loss(-eps)) / (2 * eps), 1e-3);
  std::vector<float> s(x.size());
  silu_rows(s.data(), x.data(), n * width);
  EXPECT_FLOAT_EQ(s[0], x[0] / (1.0f + std::exp(-x[0])));
}

}  // namespace
}  // namespace gpstream::audio
