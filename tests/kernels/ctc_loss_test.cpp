// CTC loss against brute force (every frame path of small cases enumerated, collapsed and summed — the
// definition itself), its gradient against central differences, and the impossible case.
#include "kernels/ctc_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

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

TEST(CtcLoss, MatchesBruteForceEnumeration) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  const std::vector<std::vector<int32_t>> cases = {{1}, {1, 2}, {2, 2}, {1, 2, 1}, {3, 3, 3}, {}};
  for (int T : {1, 2, 3, 5, 6})
    for (const auto& labels : cases) {
      const int V = 4;
      std::vector<float> z(static_cast<size_t>(T * V));
      for (float& v : z) v = nd(rng);
      const double got = ctc_loss(nullptr, z.data(), T, V, labels.data(), static_cast<int64_t>(labels.size()), 1.0f);
      const double want = brute_force(z, T, V, labels);
      if (std::isinf(want)) {
        EXPECT_TRUE(std::isinf(got)) << "T " << T << " L " << labels.size();
      } else {
        EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want))) << "T " << T << " L " << labels.size();
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
    const double fd = 0.5 * (ctc_loss(nullptr, zp.data(), T, V, labels.data(), 4, 1.0f) -
                             ctc_loss(nullptr, zm.data(), T, V, labels.data(), 4, 1.0f)) /
                      (double(zp[i]) - zm[i]);
    EXPECT_NEAR(g[i], fd, 2e-4) << i;
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
  EXPECT_NEAR(ctc_loss(nullptr, z.data(), 3, 4, labels.data(), 2, 1.0f), 3 * std::log(4.0), 1e-12);
}

}  // namespace
}  // namespace gpstream::kernels
