// AdamW against a hand-computed step, clipping, schedules at hand-derived points.
#include "train/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../testing/fp_bounds.h"

namespace gpstream::train {
namespace {

using gpstream::testing::gamma_n;
using gpstream::testing::kUnitF32;

// One fp32 AdamW step p − lr·(m̂/(√v̂ + eps) + wd·p) against the same step in exact arithmetic with the
// decimal hyperparameters. `update_roundings` bounds the relative error of m̂/(√v̂ + eps) (counted at each
// use); lr and wd carry their fp32 representation (u each), wd·p, the bracket's sum and lr·(…) one rounding
// each, and p − step a final u·|p_new|. eps_share: the exact step's departure from m̂/√v̂ (eps/√v̂) when the
// expectation leaves eps out.
double adamw_tol(double p_new, double lr, double update, double wd_p, double update_roundings,
                 double eps_share) {
  return lr * std::fabs(update) * gamma_n(static_cast<int64_t>(update_roundings) + 3) +
         lr * std::fabs(wd_p) * gamma_n(5) + lr * eps_share + kUnitF32 * std::fabs(p_new);
}

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
  // In fp32 the representation error of β cancels (m̂ = ((1−β₁)g)·(1/(1−β₁)), 1 − β exact by Sterbenz):
  // m̂ has 3 roundings, v̂ 4, √ halves them and adds 1, + eps and the division 1 each: 8 in all.
  EXPECT_NEAR(p.values[0], 1.0 - 0.01 * (1.0 + 0.1 * 1.0), adamw_tol(0.989, 0.01, 1.0, 0.1, 8, 1e-8 / 0.5));
  EXPECT_NEAR(p.values[1], -2.0 - 0.01 * (-1.0 + 0.1 * -2.0),
              adamw_tol(-1.988, 0.01, 1.0, 0.2, 8, 1e-8 / 1.0));
  EXPECT_NEAR(p.values[2], 0.5 - 0.01 * 1.0, adamw_tol(0.49, 0.01, 1.0, 0.0, 8, 1e-8 / 2.0));
  // Step 2 with g2 for element 0: m = 0.9·0.05·... computed by hand in double.
  const double w1 = p.values[0];
  g = {-0.25f, 0.0f, 0.0f};
  opt.step(p, g, 0.01f, 1);
  const double m = 0.9 * (0.1 * 0.5) + 0.1 * -0.25, v = 0.99 * (0.01 * 0.25) + 0.01 * 0.0625;
  const double mh = m / (1 - 0.81), vh = v / (1 - 0.9801);
  // Now β's fp32 representation (u relative) no longer cancels: 1 − β₁ carries 9u, 1 − β₂ 99u, 1 − β₁²
  // 12.8u, 1 − β₂² 148u. m = β₁m₁ + (1−β₁)g₂ with terms ≤ 12u off and cancellation (0.045 − 0.025 = 0.02,
  // ×3.5): 45u, m̂ 45 + 14 + 1 = 60u; v (no cancellation) 103u, v̂ 103 + 149 + 1 = 253u, √v̂ 128u;
  // m̂/(√v̂ + eps) 60 + 128 + 2 = 190 roundings.
  const double want = w1 - 0.01 * (mh / (std::sqrt(vh) + 1e-8) + 0.1 * w1);
  EXPECT_NEAR(p.values[0], want, adamw_tol(want, 0.01, mh / std::sqrt(vh), 0.1 * w1, 190, 0.0));
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
  // First step: the update is lr · sign(g) (up to eps), scaled per tensor (× 0.25: exact); 8 roundings in
  // the update as in TwoStepsMatchHandComputation, eps = AdamWOptions{}.eps against |g| = 2.
  const double eps_share = AdamWOptions{}.eps / 2.0;
  EXPECT_NEAR(p.values[0], 1.0 - 0.1, adamw_tol(0.9, 0.1, 1.0, 0.0, 8, eps_share));
  EXPECT_NEAR(p.values[1], 1.0 - 0.025, adamw_tol(0.975, 0.025, 1.0, 0.0, 8, eps_share));
}

TEST(ClipGradNorm, ScalesToMaxNorm) {
  std::vector<float> g = {3.0f, 4.0f};
  EXPECT_EQ(clip_grad_norm(g, 1.0), 5.0);  // √(9 + 16) in double: exact
  // g · fp32(1 / (5 + 1e-6)): the 1e-6 moves it by 2e-7 relative; the scale and the product round (u each);
  // the fp32 literal is within u too.
  EXPECT_NEAR(g[0], 0.6f, 0.6 * (1e-6 / 5.0 + 3 * kUnitF32));
  EXPECT_NEAR(g[1], 0.8f, 0.8 * (1e-6 / 5.0 + 3 * kUnitF32));
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
  // Warm-up is lr · (step + 1) / warmup in fp32 (one rounding); the decay is taken in double and rounded
  // to fp32 once (u relative; cos(π/2) ≈ 6e-17 is far below it, cos(π) = −1 exactly).
  EXPECT_NEAR(s.at(0), 0.1, kUnitF32 * 0.1);
  EXPECT_EQ(s.at(9), 1.0f);
  EXPECT_EQ(s.at(10), 1.0f);
  EXPECT_NEAR(s.at(60), 0.5, kUnitF32 * 0.5);  // half-way: (1 + cos(π/2))/2
  EXPECT_EQ(s.at(110), 0.0f);
  s.kind = ScheduleKind::Linear;
  s.min_lr_ratio = 0.1f;
  // lo = fp32(0.1) is off by ≤ u·0.1 and enters as lo·(1 − 0.5).
  EXPECT_NEAR(s.at(60), 0.1 + 0.9 * 0.5, kUnitF32 * (0.5 * 0.1 + 0.55));
  s.kind = ScheduleKind::Constant;
  EXPECT_EQ(s.at(1000), 1.0f);
  EXPECT_FALSE(parse_schedule("exp").has_value());
}

}  // namespace
}  // namespace gpstream::train
