// Backward kernels against central finite differences of double-precision forwards written here
// (independent of the fp32 kernels), on odd shapes. Objective: L = Σ c ⊙ out for fixed random c, so
// dout = c. Tolerance max|Δ| ≤ 1e-4 · max(1, max|g|).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "../testing/fp_bounds.h"
#include "kernels/activation.h"
#include "kernels/activation_backward.h"
#include "kernels/attention_backward.h"
#include "kernels/cross_entropy.h"
#include "kernels/linear_backward.h"
#include "kernels/norm.h"
#include "kernels/norm_backward.h"
#include "kernels/rope.h"

namespace gpstream::kernels {
namespace {

std::vector<float> randn(size_t n, uint64_t seed, float std = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, std);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Central differences of f (double objective) with respect to every element of x.
std::vector<double> numeric_grad(std::vector<float>& x, const std::function<double()>& f, float h = 1e-3f) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    x[i] = x0 + h;
    const double hp = static_cast<double>(x[i]) - x0;  // the step actually taken in fp32
    const double fp = f();
    x[i] = x0 - h;
    const double hm = x0 - static_cast<double>(x[i]);
    const double fm = f();
    x[i] = x0;
    g[i] = (fp - fm) / (hp + hm);
  }
  return g;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double gmax = 0.0;
  for (double w : want) gmax = std::max(gmax, std::abs(w));
  const double tol = 1e-4 * std::max(1.0, gmax);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol) << what << " element " << i << " (max |g| " << gmax << ")";
}

double dot(const std::vector<double>& a, const std::vector<float>& c) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * c[i];
  return s;
}

TEST(RmsnormBackward, MatchesFiniteDifferences) {
  const int64_t T = 3, n = 13;
  const float eps = 1e-5f;
  auto x = randn(T * n, 1), w = randn(n, 2), c = randn(T * n, 3);
  auto f = [&] {
    std::vector<double> y(T * n);
    for (int64_t t = 0; t < T; ++t) {
      double ss = 0;
      for (int64_t i = 0; i < n; ++i) ss += double(x[t * n + i]) * x[t * n + i];
      const double r = 1.0 / std::sqrt(ss / n + eps);
      for (int64_t i = 0; i < n; ++i) y[t * n + i] = x[t * n + i] * r * w[i];
    }
    return dot(y, c);
  };
  std::vector<float> dx(T * n, 0.0f), dw(n, 0.0f), dx_ref(T * n, 0.0f), dw_ref(n, 0.0f);
  rmsnorm_backward(dx.data(), n, dw.data(), c.data(), n, x.data(), n, w.data(), T, n, eps);
  rmsnorm_backward_ref(dx_ref.data(), n, dw_ref.data(), c.data(), n, x.data(), n, w.data(), T, n, eps);
  expect_close(dx, numeric_grad(x, f), "dx");
  expect_close(dw, numeric_grad(w, f), "dw");
  expect_close(dx_ref, numeric_grad(x, f), "dx_ref");
  // Backward accumulates: the second call adds the same fp32 value v (0 + v and v + v are exact), so dx is
  // 2v against 2·dx_ref. v = r·dy_i·w_i − (r³/n)·Σ_j dy_j w_j x_j · x_i with r = 1/√(ss/n + eps) in fp32
  // (ss in double; the cast, + eps, √ and 1/ leave ≤ 3u in r, 9u in r³): the first term within γ_5, the
  // second within γ_{n+16} (the n-term dot of two products, r³, /n, · x_i), the subtraction u|v|; the double
  // reference rounds once to fp32 (u|ref|).
  rmsnorm_backward(dx.data(), n, nullptr, c.data(), n, x.data(), n, w.data(), T, n, eps);
  const double u = gpstream::testing::kUnitF32;
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0, dot_abs = 0;
    for (int64_t i = 0; i < n; ++i) {
      ss += double(x[t * n + i]) * x[t * n + i];
      dot_abs += std::fabs(double(c[t * n + i]) * w[i] * x[t * n + i]);
    }
    const double r = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(t * n + i);
      const double bound = gpstream::testing::gamma_n(5) * r * std::fabs(double(c[k]) * w[i]) +
                           gpstream::testing::gamma_n(n + 16) * std::fabs(x[k]) * r * r * r / n * dot_abs +
                           u * std::fabs(dx[k] / 2) + u * std::fabs(dx_ref[k]);
      EXPECT_NEAR(dx[k], 2 * dx_ref[k], 2 * bound);
    }
  }
}

TEST(GatedActBackward, SiluAndGeluMatchFiniteDifferences) {
  const int64_t T = 2, n = 11;
  for (Activation act : {Activation::Silu, Activation::GeluTanh}) {
    auto g = randn(T * n, 4, 2.0f), u = randn(T * n, 5), c = randn(T * n, 6);
    auto f = [&] {
      double s = 0;
      for (int64_t i = 0; i < T * n; ++i) {
        const double x = g[i];
        const double a =
            act == Activation::Silu
                ? x / (1.0 + std::exp(-x))
                : 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        s += a * u[i] * c[i];
      }
      return s;
    };
    std::vector<float> dg(T * n), du(T * n);
    gated_act_backward(dg.data(), du.data(), c.data(), n, g.data(), u.data(), n, T, n, act);
    expect_close(dg, numeric_grad(g, f), "dgate");
    expect_close(du, numeric_grad(u, f), "dup");
  }
}

TEST(LinearBackward, MatchesFiniteDifferencesAndReference) {
  const int64_t T = 5, rows = 7, cols = 9;
  auto x = randn(T * cols, 7), w = randn(rows * cols, 8), b = randn(rows, 9), c = randn(T * rows, 10);
  auto f = [&] {
    double s = 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        double y = b[r];
        for (int64_t k = 0; k < cols; ++k) y += double(x[t * cols + k]) * w[r * cols + k];
        s += y * c[t * rows + r];
      }
    return s;
  };
  std::vector<float> dx(T * cols, 0), dw(rows * cols, 0), db(rows, 0);
  linear_backward(dx.data(), cols, dw.data(), db.data(), c.data(), rows, x.data(), cols, w.data(), rows, cols,
                  T);
  expect_close(dx, numeric_grad(x, f), "dx");
  expect_close(dw, numeric_grad(w, f), "dw");
  expect_close(db, numeric_grad(b, f), "db");
  std::vector<float> dx2(T * cols, 0), dw2(rows * cols, 0), db2(rows, 0);
  linear_backward_ref(dx2.data(), cols, dw2.data(), db2.data(), c.data(), rows, x.data(), cols, w.data(),
                      rows, cols, T);
  // dW[r][k] = Σ_t dout[t][r]·x[t][k]: T fp32 terms (γ_T Σ|dout x|) against the double reference rounded
  // to fp32 (u|ref|).
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      double mag = 0;
      for (int64_t t = 0; t < T; ++t) mag += std::fabs(double(c[t * rows + r]) * x[t * cols + k]);
      const size_t i = static_cast<size_t>(r * cols + k);
      EXPECT_NEAR(dw[i], dw2[i], gpstream::testing::gamma_n(T) * mag + gpstream::testing::kUnitF32 * std::fabs(dw2[i]));
    }
}

TEST(RopeBackward, InverseRotationMatchesFiniteDifferences) {
  const int64_t T = 3, heads = 2, D = 8, half = D / 2;
  std::vector<float> pos = {0.5f, 3.0f, 17.25f}, inv = {1.0f, 0.3f, 0.05f, 0.001f};
  std::vector<float> cs(T * half), sn(T * half);
  rope_table(cs.data(), sn.data(), pos.data(), inv.data(), T, half);
  auto x = randn(T * heads * D, 11), c = randn(T * heads * D, 12);
  auto f = [&] {
    double s = 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const double a = double(pos[t]) * inv[i];
          const float* v = &x[(t * heads + h) * D];
          const double y1 = v[i] * std::cos(a) - v[i + half] * std::sin(a);
          const double y2 = v[i + half] * std::cos(a) + v[i] * std::sin(a);
          s += y1 * c[(t * heads + h) * D + i] + y2 * c[(t * heads + h) * D + i + half];
        }
    return s;
  };
  std::vector<float> dx = c;
  rope_apply(dx.data(), heads * D, cs.data(), sn.data(), T, heads, D, -1.0f);
  expect_close(dx, numeric_grad(x, f), "dx");
}

TEST(CrossEntropy, ForwardAndBackwardMatchDouble) {
  const int64_t R = 3, V = 17;
  auto z = randn(R * V, 13, 3.0f);
  std::vector<int32_t> y = {0, 16, 5};
  auto f = [&] {
    double s = 0;
    for (int64_t r = 0; r < R; ++r) {
      double m = -1e300, sum = 0;
      for (int64_t j = 0; j < V; ++j) m = std::max(m, double(z[r * V + j]));
      for (int64_t j = 0; j < V; ++j) sum += std::exp(z[r * V + j] - m);
      s += m + std::log(sum) - z[r * V + y[r]];
    }
    return 0.5 * s;
  };
  std::vector<float> losses(R);
  cross_entropy_forward(losses.data(), z.data(), y.data(), R, V);
  // The kernel takes lse in double and rounds lse − z_y to fp32 once (u|loss| per row); both double
  // evaluations are within γ_{V+3}(2 max|z| + ln V + 1) of exact (u = 2^-53) per row.
  double zmax = 0;
  for (float v : z) zmax = std::max(zmax, static_cast<double>(std::fabs(v)));
  const double ce_tol = 0.5 * (gpstream::testing::kUnitF32 * (std::fabs(losses[0]) + std::fabs(losses[1]) + std::fabs(losses[2])) +
                               2 * R * gpstream::testing::gamma_n(V + 3, gpstream::testing::kUnitF64) *
                                   (2 * zmax + std::log(double(V)) + 1));
  EXPECT_NEAR(0.5 * (losses[0] + losses[1] + losses[2]), f(), ce_tol);
  std::vector<float> dz(R * V);
  cross_entropy_backward(dz.data(), z.data(), y.data(), R, V, 0.5f);
  expect_close(dz, numeric_grad(z, f), "dlogits");
}

// Double attention with the structured mask, straight from gpe.md §6 (source/target ranks).
double attention_objective(const std::vector<float>& q, const std::vector<float>& k,
                           const std::vector<float>& v, const std::vector<uint8_t>& groups,
                           const std::vector<int32_t>& ns, const std::vector<int32_t>& nt, int64_t T,
                           int64_t D, double scale, const std::vector<float>& c, double cap = 0,
                           int window = 0) {
  std::vector<int> rank(T);
  int cnt[2] = {0, 0};
  for (int64_t j = 0; j < T; ++j) rank[j] = cnt[groups[j]]++;
  double s = 0;
  for (int64_t i = 0; i < T; ++i) {
    std::vector<double> p(T, 0.0);
    double m = -std::numeric_limits<double>::infinity();
    std::vector<bool> vis(T);
    for (int64_t j = 0; j < T; ++j) {
      const int lim = groups[j] ? nt[i] : ns[i];
      vis[j] = rank[j] < lim && (window == 0 || rank[j] >= lim - window);
      if (!vis[j]) continue;
      double d = 0;
      for (int64_t e = 0; e < D; ++e) d += double(q[i * D + e]) * k[j * D + e];
      p[j] = d * scale;
      if (cap > 0) p[j] = cap * std::tanh(p[j] / cap);
      m = std::max(m, p[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < T; ++j) sum += vis[j] ? (p[j] = std::exp(p[j] - m)) : (p[j] = 0);
    for (int64_t e = 0; e < D; ++e) {
      double o = 0;
      for (int64_t j = 0; j < T; ++j) o += sum > 0 ? p[j] / sum * v[j * D + e] : 0.0;
      s += o * c[i * D + e];
    }
  }
  return s;
}

TEST(AttentionBackward, StructuredMaskMatchesFiniteDifferences) {
  // Group layout: 4 source rows, 3 target rows (sources see causally, targets see 2..4 sources + causal
  // targets), and one row that sees nothing.
  const std::vector<uint8_t> groups = {0, 0, 1, 0, 1, 0, 1, 0};
  const std::vector<int32_t> ns = {1, 2, 2, 3, 3, 4, 4, 0};
  const std::vector<int32_t> nt = {0, 0, 1, 0, 2, 0, 3, 0};
  const int64_t T = 8, D = 5;
  const float scale = 0.4f;
  auto q = randn(T * D, 14), k = randn(T * D, 15), v = randn(T * D, 16), c = randn(T * D, 17);
  std::vector<float> mask(T * T), probs(T * T), out(T * D), out_ref(T * D);
  attention_mask_build(mask.data(), groups.data(), ns.data(), nt.data(), T);
  attention_forward_seq(out.data(), D, probs.data(), q.data(), D, k.data(), v.data(), D, mask.data(), T, D,
                        scale);
  attention_forward_seq_ref(out_ref.data(), D, nullptr, q.data(), D, k.data(), v.data(), D, mask.data(), T, D,
                            scale);
  for (int64_t i = 0; i < T * D; ++i) EXPECT_NEAR(out[i], out_ref[i], 1e-5);
  for (int64_t e = 0; e < D; ++e) EXPECT_EQ(out[7 * D + e], 0.0f);  // the row that sees nothing
  // Forward against the independent double objective.
  double s = 0;
  for (int64_t i = 0; i < T * D; ++i) s += double(out[i]) * c[i];
  EXPECT_NEAR(s, attention_objective(q, k, v, groups, ns, nt, T, D, scale, c), 1e-4);

  std::vector<float> dq(T * D, 0), dk(T * D, 0), dv(T * D, 0), scratch(T * T);
  attention_backward_seq(dq.data(), D, dk.data(), dv.data(), D, scratch.data(), c.data(), D, probs.data(),
                         q.data(), D, k.data(), v.data(), D, T, D, scale);
  auto f = [&] { return attention_objective(q, k, v, groups, ns, nt, T, D, scale, c); };
  expect_close(dq, numeric_grad(q, f), "dq");
  expect_close(dk, numeric_grad(k, f), "dk");
  expect_close(dv, numeric_grad(v, f), "dv");
}

// Gemma 2: soft-capped scores (cap 0.8 bends scores of a few units strongly) under a window of 2 rows
// per group (the last 2 visible rows of each group; docs/models.md).
TEST(AttentionBackward, SoftcapAndWindowMatchFiniteDifferences) {
  const std::vector<uint8_t> groups = {0, 0, 1, 0, 1, 0, 1, 0, 1};
  const std::vector<int32_t> ns = {1, 2, 2, 3, 3, 4, 4, 5, 5};
  const std::vector<int32_t> nt = {0, 0, 1, 0, 2, 0, 3, 0, 4};
  const int64_t T = 9, D = 4;
  const float scale = 0.9f, cap = 0.8f;
  const int window = 2;
  auto q = randn(T * D, 34, 1.5f), k = randn(T * D, 35, 1.5f), v = randn(T * D, 36), c = randn(T * D, 37);
  std::vector<float> mask(T * T), probs(T * T), out(T * D), out_ref(T * D);
  attention_mask_build(mask.data(), groups.data(), ns.data(), nt.data(), T, window);
  // Row 8 (target, sees 5 sources and 4 targets) keeps sources 3, 4 and targets 2, 3 only: columns 5, 7 and
  // 6, 8 (rows in cache order: s0 s1 t0 s2 t1 s3 t2 s4 t3).
  for (int64_t j = 0; j < T; ++j)
    EXPECT_EQ(std::isinf(mask[8 * T + j]), !(j == 5 || j == 7 || j == 6 || j == 8)) << j;
  attention_forward_seq(out.data(), D, probs.data(), q.data(), D, k.data(), v.data(), D, mask.data(), T, D, scale,
                        nullptr, cap);
  attention_forward_seq_ref(out_ref.data(), D, nullptr, q.data(), D, k.data(), v.data(), D, mask.data(), T, D,
                            scale, cap);
  for (int64_t i = 0; i < T * D; ++i) EXPECT_NEAR(out[i], out_ref[i], 1e-5);
  double s = 0;
  for (int64_t i = 0; i < T * D; ++i) s += double(out[i]) * c[i];
  auto f = [&] { return attention_objective(q, k, v, groups, ns, nt, T, D, scale, c, cap, window); };
  EXPECT_NEAR(s, f(), 1e-4);
  std::vector<float> dq(T * D, 0), dk(T * D, 0), dv(T * D, 0), scratch(2 * T * T);
  attention_backward_seq(dq.data(), D, dk.data(), dv.data(), D, scratch.data(), c.data(), D, probs.data(),
                         q.data(), D, k.data(), v.data(), D, T, D, scale, nullptr, cap);
  expect_close(dq, numeric_grad(q, f), "dq");
  expect_close(dk, numeric_grad(k, f), "dk");
  expect_close(dv, numeric_grad(v, f), "dv");
}

}  // namespace
}  // namespace gpstream::kernels

namespace gpstream::kernels {
namespace {

// Row blocks that stop at each block's last visible key give the same outputs and gradients as the
// full T×T products, on a multi-block causal-like layout with a row that sees nothing.
TEST(AttentionBackward, RowEndBlockingEqualsFullProducts) {
  const int64_t T = 150, D = 8;
  std::vector<uint8_t> groups(T);
  std::vector<int32_t> ns(T), nt(T);
  int cnt[2] = {0, 0};
  for (int64_t i = 0; i < T; ++i) {
    groups[i] = (i % 3 == 2) ? 1 : 0;
    ++cnt[groups[i]];
    ns[i] = groups[i] ? std::max(0, cnt[0] - 2) : cnt[0];
    nt[i] = groups[i] ? cnt[1] : 0;
  }
  ns[70] = 0;  // row 70 is a source row seeing nothing
  std::vector<float> mask(T * T);
  std::vector<int32_t> row_end(T);
  attention_mask_build(mask.data(), groups.data(), ns.data(), nt.data(), T);
  attention_row_end(row_end.data(), mask.data(), T);
  EXPECT_EQ(row_end[70], 0);
  auto q = randn(T * D, 21), k = randn(T * D, 22), v = randn(T * D, 23), c = randn(T * D, 24);
  std::vector<float> o1(T * D), o2(T * D), p1(T * T), p2(T * T), s(T * T);
  attention_forward_seq(o1.data(), D, p1.data(), q.data(), D, k.data(), v.data(), D, mask.data(), T, D, 0.3f);
  attention_forward_seq(o2.data(), D, p2.data(), q.data(), D, k.data(), v.data(), D, mask.data(), T, D, 0.3f,
                        row_end.data());
  for (int64_t i = 0; i < T * D; ++i) ASSERT_NEAR(o1[i], o2[i], 1e-5) << i;
  std::vector<float> dq1(T * D, 0), dk1(T * D, 0), dv1(T * D, 0), dq2(T * D, 0), dk2(T * D, 0), dv2(T * D, 0);
  attention_backward_seq(dq1.data(), D, dk1.data(), dv1.data(), D, s.data(), c.data(), D, p1.data(), q.data(),
                         D, k.data(), v.data(), D, T, D, 0.3f);
  attention_backward_seq(dq2.data(), D, dk2.data(), dv2.data(), D, s.data(), c.data(), D, p2.data(), q.data(),
                         D, k.data(), v.data(), D, T, D, 0.3f, row_end.data());
  for (int64_t i = 0; i < T * D; ++i) {
    ASSERT_NEAR(dq1[i], dq2[i], 1e-5) << i;
    ASSERT_NEAR(dk1[i], dk2[i], 1e-5) << i;
    ASSERT_NEAR(dv1[i], dv2[i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace gpstream::kernels
