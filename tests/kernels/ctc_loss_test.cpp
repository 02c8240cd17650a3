// CTC loss against brute force (every frame path of small cases enumerated, collapsed and summed — the
// definition itself), its gradient against central differences, and the impossible case.
#include "kernels/ctc_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../testing/fp_bounds.h"

namespace gpstream::kernels {
namespace {

// −log Σ over paths collapsing to `labels` of Π softmax, by enumeration of all V^T paths.
double brute_force(const std::vector<float>& z, int T, int V, const std::vector<int32_t>& labels) {
  std::vector<double> p(static_cast<size_t>(T * V));
  for (int t = 0; t < T; ++t) {
    double s = 0;
    for (int k = 0; k < V; ++k) s += std::exp(double(z[t * V + k]));
    for (int k = 0; k < V; ++k) p[t * V + k] = std::exp(double(z[t * V + k])) / s;
  }
  double total = 0;
  std::vector<int> path(static_cast<size_t>(T), 0);
  for (;;) {
    std::vector<int32_t> out;
    int prev = -1;
    for (int t = 0; t < T; ++t) {
      if (path[t] != prev && path[t] != 0) out.push_back(path[t]);
      prev = path[t];
    }
    if (out == labels) {
      double pr = 1;
      for (int t = 0; t < T; ++t) pr *= p[t * V + path[t]];
      total += pr;
    }
    int t = 0;
    while (t < T && ++path[t] == V) path[t++] = 0;
    if (t == T) break;
  }
  return -std::log(total);
}

// Both in double (u = 2^-53). The enumeration: softmax entries (V-term sum, exp, division: γ_{V+2}), a
// path's product of T of them, the sum of V^T paths: relative γ_{T(V+3) + V^T}, absolute after −log, plus
// u|loss|. The recursion: log-softmax entries within γ_{V+3}(|z|max + lse) ≤ γ_{V+3}(2|z|max + ln V), added
// along a path of T frames; ≤ 2T log_adds on it, each rounding u|α| and its log1p/exp 2u.
double ctc_tol(int T, int V, double zmax, double loss) {
  const double u = gpstream::testing::kUnitF64;
  const double paths = std::pow(static_cast<double>(V), T);
  const double enumeration =
      gpstream::testing::gamma_n(T * (V + 3) + static_cast<int64_t>(paths), u) + u * loss;
  const double recursion =
      T * gpstream::testing::gamma_n(V + 3, u) * (2 * zmax + std::log(static_cast<double>(V))) +
      2.0 * T * u * (2 + loss);
  return enumeration + recursion;
}

double max_abs(const std::vector<float>& z) {
  double m = 0;
  for (float v : z) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

TEST(CtcLoss, MatchesBruteForceEnumeration) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  const std::vector<std::vector<int32_t>> cases = {{1}, {1, 2}, {2, 2}, {1, 2, 1}, {3, 3, 3}, {}};
  for (int T : {1, 2, 3, 5, 6})
    for (const auto& labels : cases) {
      const int V = 4;
      std::vector<float> z(static_cast<size_t>(T * V));
      for (float& v : z) v = nd(rng);
      const double got =
          ctc_loss(nullptr, z.data(), T, V, labels.data(), static_cast<int64_t>(labels.size()), 1.0f);
      const double want = brute_force(z, T, V, labels);
      if (std::isinf(want)) {
        EXPECT_TRUE(std::isinf(got)) << "T " << T << " L " << labels.size();
      } else {
        EXPECT_NEAR(got, want, ctc_tol(T, V, max_abs(z), std::abs(want)))
            << "T " << T << " L " << labels.size();
      }
    }
}

TEST(CtcLoss, GradientMatchesFiniteDifferences) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int T = 9, V = 5;
  const std::vector<int32_t> labels = {1, 3, 3, 2};
  std::vector<float> z(static_cast<size_t>(T * V)), g(z.size());
  for (float& v : z) v = nd(rng);
  ctc_loss(g.data(), z.data(), T, V, labels.data(), 4, 0.5f);
  for (size_t i = 0; i < z.size(); ++i) {
    std::vector<float> zp = z, zm = z;
    const float h = 1e-2f;
    zp[i] += h;
    zm[i] -= h;
    const double lp = ctc_loss(nullptr, zp.data(), T, V, labels.data(), 4, 1.0f),
                 lm = ctc_loss(nullptr, zm.data(), T, V, labels.data(), 4, 1.0f);
    const double step = double(zp[i]) - zm[i];
    const double fd = 0.5 * (lp - lm) / step;
    // Central differences are off by (step/2)²/6·|f‴|. Along one logit the loss is a difference of two
    // log-sum-exps whose exponents hold that logit with coefficient 0 or 1, so f‴ is a third cumulant of a
    // Bernoulli variable: |f‴| ≤ 2 · 1/(6√3). The two losses round in double (ctc_tol each, over the step)
    // and the fp32 gradient once (u|g|); all × 0.5, the scale.
    const double truncation = 0.5 * (step / 2) * (step / 2) / 6 * (2 / (6 * std::sqrt(3.0)));
    const double rounding = 0.5 * 2 * ctc_tol(T, V, max_abs(zp) + max_abs(zm), std::max(lp, lm)) / step;
    EXPECT_NEAR(g[i], fd, truncation + rounding + gpstream::testing::kUnitF32 * std::fabs(g[i])) << i;
  }
}

TEST(CtcLoss, TooFewFramesIsInfiniteWithZeroGradient) {
  const std::vector<float> z(3 * 4, 0.5f);
  std::vector<float> g(z.size(), 7.0f);
  const std::vector<int32_t> labels = {2, 2};  // needs 3 frames: 2, blank, 2
  EXPECT_TRUE(std::isinf(ctc_loss(g.data(), z.data(), 2, 4, labels.data(), 2, 1.0f)));
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(g[i], 0.0f);
  EXPECT_FALSE(std::isinf(ctc_loss(g.data(), z.data(), 3, 4, labels.data(), 2, 1.0f)));
  // Uniform scores: every one of the V^T paths has probability 4^-3; exactly one emits "2 2".
  EXPECT_NEAR(ctc_loss(nullptr, z.data(), 3, 4, labels.data(), 2, 1.0f), 3 * std::log(4.0),
              ctc_tol(3, 4, 0.5, 3 * std::log(4.0)) + gpstream::testing::kUnitF64 * 3 * std::log(4.0));
}

}  // namespace
}  // namespace gpstream::kernels
