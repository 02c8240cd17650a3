// AdamW against a hand-computed step, clipping, schedules at hand-derived points.
#include "train/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpstream::train {
namespace {

TEST(AdamW, TwoStepsMatchHandComputation) {
  ParamSet p;
  p.add("w", {2}, ParamKind::Matrix);
  p.add("norm", {1}, ParamKind::Norm);
  p.values = {1.0f, -2.0f, 0.5f};
  AdamWOptions o;
  o.beta1 = 0.9f;
  o.beta2 = 0.99f;
  o.eps = 1e-8f;
  o.weight_decay = 0.1f;
  AdamW opt(p.size(), o);
  std::vector<float> g = {0.5f, -1.0f, 2.0f};
  opt.step(p, g, 0.01f, 1);
  // Step 1: m̂ = g, v̂ = g², update = sign(g) (up to eps); decay on the matrix only.
  EXPECT_NEAR(p.values[0], 1.0 - 0.01 * (1.0 + 0.1 * 1.0), 1e-6);
  EXPECT_NEAR(p.values[1], -2.0 - 0.01 * (-1.0 + 0.1 * -2.0), 1e-6);
  EXPECT_NEAR(p.values[2], 0.5 - 0.01 * 1.0, 1e-6);
  // Step 2 with g2 for element 0: m = 0.9·0.05·... computed by hand in double.
  const double w1 = p.values[0];
  g = {-0.25f, 0.0f, 0.0f};
  opt.step(p, g, 0.01f, 1);
  const double m = 0.9 * (0.1 * 0.5) + 0.1 * -0.25, v = 0.99 * (0.01 * 0.25) + 0.01 * 0.0625;
  const double mh = m / (1 - 0.81), vh = v / (1 - 0.9801);
  EXPECT_NEAR(p.values[0], w1 - 0.01 * (mh / (std::sqrt(vh) + 1e-8) + 0.1 * w1), 1e-6);
  EXPECT_EQ(opt.t, 2);
}

TEST(AdamW, PerTensorLearningRateScale) {
  ParamSet p;
  p.add("a", {1}, ParamKind::Norm);
  p.add("b", {1}, ParamKind::Norm);
  p.tensors[1].lr_scale = 0.25f;
  p.values = {1.0f, 1.0f};
  AdamW opt(p.size(), AdamWOptions{});
  opt.step(p, {2.0f, 2.0f}, 0.1f, 1);
  // First step: the update is lr · sign(g) (up to eps), scaled per tensor.
  EXPECT_NEAR(p.values[0], 1.0 - 0.1, 1e-6);
  EXPECT_NEAR(p.values[1], 1.0 - 0.025, 1e-6);
}

TEST(ClipGradNorm, ScalesToMaxNorm) {
  std::vector<float> g = {3.0f, 4.0f};
  EXPECT_NEAR(clip_grad_norm(g, 1.0), 5.0, 1e-9);
  EXPECT_NEAR(g[0], 0.6f, 1e-5);
  EXPECT_NEAR(g[1], 0.8f, 1e-5);
  std::vector<float> h = {0.3f, 0.4f};
  clip_grad_norm(h, 1.0);
  EXPECT_EQ(h[0], 0.3f);
}

TEST(GradGlobalNorm, LanesAndTailAgreeWithALongDoubleSum) {
  // Lengths around the eight-lane body: the tail alone, body and tail, body only. Each
  // g[i] = (i % 13 - 6) / 4 is exact in float and its square exact in double, so every partial sum is exact.
  for (size_t n : {size_t{7}, size_t{8}, size_t{1003}, size_t{4096}}) {
    std::vector<float> g(n);
    long double want = 0;
    for (size_t i = 0; i < n; ++i) {
      g[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 4.0f;
      want += static_cast<long double>(g[i]) * g[i];
    }
    EXPECT_EQ(grad_global_norm(g), std::sqrt(static_cast<double>(want))) << "n = " << n;
  }
  EXPECT_EQ(grad_global_norm({}), 0.0);
}

TEST(Schedule, WarmupThenDecay) {
  Schedule s;
  s.lr = 1.0f;
  s.warmup_steps = 10;
  s.total_steps = 110;
  s.min_lr_ratio = 0.0f;
  s.kind = ScheduleKind::Cosine;
  EXPECT_NEAR(s.at(0), 0.1, 1e-6);
  EXPECT_NEAR(s.at(9), 1.0, 1e-6);
  EXPECT_NEAR(s.at(10), 1.0, 1e-6);
  EXPECT_NEAR(s.at(60), 0.5, 1e-6);  // half-way: (1 + cos(π/2))/2
  EXPECT_NEAR(s.at(110), 0.0, 1e-6);
  s.kind = ScheduleKind::Linear;
  s.min_lr_ratio = 0.1f;
  EXPECT_NEAR(s.at(60), 0.1 + 0.9 * 0.5, 1e-6);
  s.kind = ScheduleKind::Constant;
  EXPECT_NEAR(s.at(1000), 1.0, 1e-6);
  EXPECT_FALSE(parse_schedule("exp").has_value());
}

}  // namespace
}  // namespace gpstream::train
