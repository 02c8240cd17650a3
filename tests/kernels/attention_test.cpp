// attention_forward_token against a brute-force softmax attention in double, written from the
// definition: grouped-query heads, a structured mask (a prefix of the source region plus a prefix of
// the target region), nothing visible (zeros), soft-capping, huge scores, rows past the visible prefix
// holding NaN (they must never be read) and heads outside [head_begin, head_end) left untouched.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;

struct Case {
  int n_head, n_head_kv, head_dim;
  int src_rows, tgt_rows;  // rows stored in each region
  int n_src, n_tgt;        // visible prefixes
  float scale_mul = 1.0f;  // multiplies 1/sqrt(head_dim)
  float softcap = 0.0f;
  float q_mag = 1.0f;
};

// out[h] = Σ_j softmax_j(cap(q_h·k_j · scale)) v_j over the visible rows, in double; tol: the fp32 kernel's
// error bound per element, from the same data (u = 2^-24, n visible rows, D = head_dim):
//   score: |Δs_j| ≤ γ_D Σ_i|q_i k_ji|·scale + γ_4 |s_j| (the dot, Higham (3.5); scale, and the cap's
//          division, tanh and product, slope ≤ 1);
//   weight: p_j = exp(x_j)/z with x_j = s_j − max: |Δp_j| ≤ p_j (2 max_k|Δs_k| + u|x_j| + γ_{n+3})
//          (softmax moves by p_j(Δs_j − Σ p_k Δs_k); exp's argument rounds (u|x_j|); exp, the n-term sum z,
//          1/z and the product);
//   output: o_i = Σ_j p_j v_ji by n fused multiply-adds: + γ_n Σ_j p_j |v_ji|.
//   So |Δo_i| ≤ Σ_j p_j |v_ji| (2 max|Δs| + u|x_j| + γ_{n+3} + γ_n).
std::vector<double> brute_force(const std::vector<float>& q, const std::vector<float>& ks,
                                const std::vector<float>& vs, const std::vector<float>& kt,
                                const std::vector<float>& vt, const Case& c, float scale, int64_t stride,
                                std::vector<double>& tol) {
  std::vector<double> out(static_cast<size_t>(c.n_head) * c.head_dim, 0.0);
  tol.assign(out.size(), 0.0);
  const int group = c.n_head / c.n_head_kv;
  for (int h = 0; h < c.n_head; ++h) {
    const int g = h / group;
    std::vector<double> s;
    std::vector<const float*> vrows;
    double ds = 0;  // max |Δs_j|
    auto add = [&](const std::vector<float>& K, const std::vector<float>& V, int r) {
      double d = 0;
      for (int i = 0; i < c.head_dim; ++i)
        d += double(q[h * c.head_dim + i]) * K[r * stride + g * c.head_dim + i];
      d *= scale;
      if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
      s.push_back(d);
      ds = std::max(ds, gpstream::testing::dot_error_bound(
                            q.data() + h * c.head_dim, K.data() + r * stride + g * c.head_dim, c.head_dim) *
                                scale +
                            gpstream::testing::gamma_n(4) * std::fabs(d));
      vrows.push_back(V.data() + r * stride + g * c.head_dim);
    };
    for (int r = 0; r < c.n_src; ++r) add(ks, vs, r);
    for (int r = 0; r < c.n_tgt; ++r) add(kt, vt, r);
    if (s.empty()) continue;
    double mx = -INFINITY, z = 0;
    for (double x : s) mx = std::max(mx, x);
    std::vector<double> x(s.size());
    for (size_t j = 0; j < s.size(); ++j) z += (s[j] = std::exp(x[j] = s[j] - mx));
    const int64_t n = static_cast<int64_t>(s.size());
    for (size_t j = 0; j < s.size(); ++j) {
      const double wj = 2 * ds + gpstream::testing::kUnitF32 * std::fabs(x[j]) +
                        gpstream::testing::gamma_n(n + 3) + gpstream::testing::gamma_n(n);
      for (int i = 0; i < c.head_dim; ++i) {
        out[h * c.head_dim + i] += s[j] / z * vrows[j][i];
        tol[h * c.head_dim + i] += s[j] / z * std::fabs(vrows[j][i]) * wj;
      }
    }
  }
  return out;
}

void check(const Case& c, uint32_t seed) {
  const int64_t stride = int64_t{c.n_head_kv} * c.head_dim + 3;  // padded rows
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto ks = random_floats(static_cast<size_t>(c.src_rows) * stride, seed);
  auto vs = random_floats(static_cast<size_t>(c.src_rows) * stride, seed + 1);
  auto kt = random_floats(static_cast<size_t>(c.tgt_rows) * stride, seed + 2);
  auto vt = random_floats(static_cast<size_t>(c.tgt_rows) * stride, seed + 3);
  // Rows past the visible prefix: NaN, so reading one poisons the output.
  for (int r = c.n_src; r < c.src_rows; ++r)
    for (int64_t i = 0; i < stride; ++i) ks[r * stride + i] = vs[r * stride + i] = nan;
  for (int r = c.n_tgt; r < c.tgt_rows; ++r)
    for (int64_t i = 0; i < stride; ++i) kt[r * stride + i] = vt[r * stride + i] = nan;
  auto q = random_floats(static_cast<size_t>(c.n_head) * c.head_dim, seed + 4, -c.q_mag, c.q_mag);
  const float scale = c.scale_mul / std::sqrt(static_cast<float>(c.head_dim));
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, stride, scale, c.softcap};
  const KvRegion src{ks.data(), vs.data(), c.n_src}, tgt{kt.data(), vt.data(), c.n_tgt};
  std::vector<double> tol;
  const auto want = brute_force(q, ks, vs, kt, vt, c, scale, stride, tol);

  // All heads at once, and split in two calls as the model's threads do.
  std::vector<float> scores(static_cast<size_t>(c.n_src + c.n_tgt) + 1);
  std::vector<float> out(want.size(), nan), split(want.size(), -5.0f);
  attention_forward_token(out.data(), q.data(), src, tgt, shape, 0, c.n_head, scores.data());
  const int mid = c.n_head / 2;
  attention_forward_token(split.data(), q.data(), src, tgt, shape, mid, c.n_head, scores.data());
  for (int i = 0; i < mid * c.head_dim; ++i) ASSERT_EQ(split[i], -5.0f) << "head outside the range written";
  attention_forward_token(split.data(), q.data(), src, tgt, shape, 0, mid, scores.data());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(out[i], want[i], tol[i]) << "n_src " << c.n_src << " n_tgt " << c.n_tgt << " element " << i;
    ASSERT_EQ(split[i], out[i]);
  }
}

TEST(Attention, GroupedQueryHeadsOverSourceAndTargetPrefixes) {
  check({6, 2, 16, 9, 7, 5, 3}, 1);
  check({6, 3, 8, 4, 4, 4, 4}, 2);
  check({4, 4, 5, 3, 2, 3, 1}, 3);         // plain multi-head, odd head_dim
  check({8, 1, 64, 40, 33, 37, 29}, 4);    // multi-query, long rows
  check({4, 2, 72, 12, 9, 10, 7}, 9);      // 64 values in registers, then 8 more
  check({4, 1, 128, 20, 17, 15, 11}, 10);  // two blocks of 64
}

TEST(Attention, OnlyOneRegionVisible) {
  check({6, 2, 16, 5, 5, 0, 4}, 5);  // target only (a restarting target group sees no source)
  check({6, 2, 16, 5, 5, 5, 0}, 6);  // source only
  check({6, 2, 16, 5, 0, 1, 0}, 7);  // a single row: weight exactly 1
}

TEST(Attention, NothingVisibleGivesZeros) {
  Case c{6, 2, 16, 3, 3, 0, 0};
  check(c, 8);
  // Explicitly: zeros even when the output held garbage.
  const int64_t stride = 32;
  std::vector<float> k(3 * stride, 1.0f), q(6 * 16, 1.0f), out(6 * 16, 123.0f), scores(1);
  const KvRegion none{k.data(), k.data(), 0};
  attention_forward_token(out.data(), q.data(), none, none, AttentionShape{6, 2, 16, stride, 0.25f, 0.0f}, 0,
                          6, scores.data());
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(Attention, SoftCap) {
  // Large scores so the cap changes the result: cap 5 with scores of order ±30.
  check({4, 2, 16, 12, 6, 12, 6, /*scale_mul=*/8.0f, /*softcap=*/5.0f, /*q_mag=*/4.0f}, 9);
  check({4, 2, 16, 12, 6, 7, 2, 1.0f, 50.0f}, 10);
}

TEST(Attention, HugeScoresDoNotOverflow) {
  // Scores in the thousands: exp without max subtraction would overflow to inf/NaN.
  check({4, 2, 16, 10, 10, 10, 10, /*scale_mul=*/400.0f, 0.0f, /*q_mag=*/3.0f}, 11);
}

}  // namespace
}  // namespace gpstream::kernels
