// The speech encoder's GELU (a fast_exp sigmoid, eight lanes at a time) against the libm tanh form of
// kernels/activation.h and its derivative (a separate implementation), over the vector body, the scalar tail,
// both saturated ends, and in place.
#include "audio/speech_encoder_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/activation.h"
#include "kernels/activation_backward.h"

namespace gpstream::audio {
namespace {

TEST(SpeechEncoderOps, GeluMatchesTheTanhFormAndItsDerivative) {
  const int64_t n = 2003;  // not a multiple of 8: the scalar tail runs too
  std::vector<float> x(n), dy(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = -15.0f + 30.0f * static_cast<float>(i) / static_cast<float>(n - 1);
    dy[i] = 0.5f + static_cast<float>(i % 7) * 0.25f;
  }
  std::vector<float> y(n), dx(n);
  gelu_forward(y.data(), x.data(), n);
  gelu_backward(dx.data(), dy.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float want = kernels::gelu_tanh(x[i]), dwant = dy[i] * kernels::gelu_tanh_grad(x[i]);
    EXPECT_NEAR(y[i], want, 2e-6f + 2e-6f * std::abs(want)) << "x = " << x[i];
    EXPECT_NEAR(dx[i], dwant, 2e-6f + 2e-6f * std::abs(dwant)) << "x = " << x[i];
  }
  // Saturation: exactly x far right, (almost) 0 far left, no NaN from the clamped exp.
  EXPECT_EQ(y[n - 1], 15.0f);
  EXPECT_LT(std::abs(y[0]), 1e-30f);
  EXPECT_LT(std::abs(dx[0]), 1e-30f);
  // In place.
  std::vector<float> z = x, dz = dy;
  gelu_forward(z.data(), z.data(), n);
  gelu_backward(dz.data(), dz.data(), x.data(), n);
  EXPECT_EQ(z, y);
  EXPECT_EQ(dz, dx);
}

}  // namespace
}  // namespace gpstream::audio
