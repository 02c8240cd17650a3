// Backward kernels against central finite differences of double-precision forwards written here
// (independent of the fp32 kernels), on odd shapes. Objective: L = Σ c ⊙ out for fixed random c, so
// dout = c. Each gradient element must lie within the fp32 kernel's rounding bound (derived per test from
// its operations and the test's data, Higham (3.5)) plus the central difference's own error bound
// (testing::central_difference: truncation h²|f'''|/6 with f''' bounded from the objective's own divided
// differences, and the rounding of the double evaluations, 2·e/(2h) with e = γ(u₆₄)·Σ|terms|).
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

using gpstream::testing::gamma_n;
using gpstream::testing::kUnitF32;
using gpstream::testing::kUnitF64;

// Central differences of f (double objective) with respect to every element of x, each with its error
// bound; eval_error bounds one evaluation's rounding. The step 2^-12 keeps x ± h, x ± 2h exact in fp32 for
// |x| < 2^11 away from a binade edge (central_difference takes the offsets as rounding leaves them in any
// case); the truncation h²|f'''|/6 is then ≈ 1e-8·|f'''| and the evaluations' rounding e/h ≈ 4e3·e.
struct NumericGrad {
  std::vector<double> g, error;
};
NumericGrad numeric_grad(std::vector<float>& x, const std::function<double()>& f, double eval_error,
                         float h = 0x1p-12f) {
  NumericGrad n;
  for (float& xi : x) {
    const auto d = gpstream::testing::central_difference(xi, f, h, eval_error);
    n.g.push_back(d.slope);
    n.error.push_back(d.error);
  }
  return n;
}

// |got_i − want_i| ≤ kernel_i (the fp32 kernel's rounding bound) + the difference's own error bound.
void expect_close(const std::vector<float>& got, const NumericGrad& want, const std::vector<double>& kernel,
                  const char* what) {
  ASSERT_EQ(got.size(), want.g.size());
  ASSERT_EQ(got.size(), kernel.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want.g[i], kernel[i] + want.error[i])
        << what << " element " << i << " (kernel bound " << kernel[i] << ", difference bound "
        << want.error[i] << ")";
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
  // The kernel's rounding. dx_i = v = r·dy_i·w_i − (r³/n)·Σ_j dy_j w_j x_j · x_i with r = 1/√(ss/n + eps) in
  // fp32 (ss in double; the cast, + eps, √ and 1/ leave ≤ 3u in r, 9u in r³): the first term within γ_5, the
  // second within γ_{n+16} (the n-term dot of two products, r³, /n, · x_i), the subtraction u|v|.
  // dw_i = Σ_t dy_ti x_ti r_t: T fp32 terms of two products and r's 3u, γ_{T+5} Σ_t |dy x| r. The double
  // reference (rmsnorm_backward_ref) carries the same terms with u₆₄ and rounds once to fp32 (u|ref|).
  // The objective in double: ss (n terms), r (4), y and ·c (3), the T·n-term sum: γ_{n+Tn+8}(u₆₄) Σ|x r w c|.
  std::vector<double> kdx(T * n), kdx_ref(T * n), kdw(n, 0.0);
  double f_mag = 0;
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0, dot_abs = 0;
    for (int64_t i = 0; i < n; ++i) {
      ss += double(x[t * n + i]) * x[t * n + i];
      dot_abs += std::fabs(double(c[t * n + i]) * w[i] * x[t * n + i]);
    }
    const double r = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(t * n + i);
      const double first = r * std::fabs(double(c[k]) * w[i]),
                   second = std::fabs(x[k]) * r * r * r / n * dot_abs;
      kdx[k] = gamma_n(5) * first + gamma_n(n + 16) * second + kUnitF32 * std::fabs(dx[k]);
      kdx_ref[k] =
          gamma_n(5, kUnitF64) * first + gamma_n(n + 16, kUnitF64) * second + kUnitF32 * std::fabs(dx_ref[k]);
      kdw[static_cast<size_t>(i)] += gamma_n(T + 5) * std::fabs(double(c[k]) * x[k]) * r;
      f_mag += std::fabs(double(c[k]) * x[k] * w[i]) * r;
    }
  }
  const double f_err = gamma_n(n + T * n + 8, kUnitF64) * f_mag;
  expect_close(dx, numeric_grad(x, f, f_err), kdx, "dx");
  expect_close(dw, numeric_grad(w, f, f_err), kdw, "dw");
  expect_close(dx_ref, numeric_grad(x, f, f_err), kdx_ref, "dx_ref");
  // Backward accumulates: the second call adds the same fp32 value v (0 + v and v + v are exact), so dx is
  // 2v against 2·dx_ref: each side within twice its bound above of 2·exact.
  rmsnorm_backward(dx.data(), n, nullptr, c.data(), n, x.data(), n, w.data(), T, n, eps);
  for (size_t k = 0; k < dx.size(); ++k) EXPECT_NEAR(dx[k], 2 * dx_ref[k], 2 * (kdx[k] + kdx_ref[k]));
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
    // The kernel's rounding, from its operations (kernels/activation_backward.cpp) per element, with
    // dup = dout·act(g) and dgate = (dout·up)·act'(g):
    //  - SiLU: s = 1/(1 + e), e = fast_exp(−g) (relative ~2e-7 ≈ 4u): Δs/s ≤ (1 − s)·4u + 2u ≤ 6u; act = g·s
    //    one more u. act' = s·fma(g, 1 − s, 1): 1 − s is off by s·6u + u(1 − s), the fused g(1 − s) + 1 by
    //    |g| times that plus u|1 + g(1 − s)|, the product with s by (6u + u)|act'|.
    //  - GELU (tanh form): testing::gelu_tanh_bound (the fast_exp sigmoid of kernels/gelu.h).
    //  Then dout·act one rounding, (dout·up)·act' two.
    // The objective in double: each act within ~8u₆₄ relative, and 1 + tanh only within u₆₄ absolute
    // (|x|·u₆₄ in GELU), summed over T·n terms: e = γ_{Tn+8}(u₆₄) Σ (|act| + |x|)|up·c|.
    std::vector<double> kdg(T * n), kdu(T * n);
    double f_mag = 0;
    for (int64_t i = 0; i < T * n; ++i) {
      const double x = g[i], cu = std::fabs(double(c[i]) * u[i]);
      double a, da, ea, eda;
      if (act == Activation::Silu) {
        const double s = 1.0 / (1.0 + std::exp(-x));
        a = x * s;
        da = s * (1.0 + x * (1.0 - s));
        ea = 7 * kUnitF32 * std::fabs(a);
        const double one_minus_s = s * 6 * kUnitF32 + kUnitF32 * (1.0 - s);
        eda = s * (std::fabs(x) * one_minus_s + kUnitF32 * std::fabs(1.0 + x * (1.0 - s))) +
              7 * kUnitF32 * std::fabs(da);
      } else {
        const auto b = gpstream::testing::gelu_tanh_bound(x);
        const double kk = std::sqrt(2.0 / M_PI), th = std::tanh(kk * (x + 0.044715 * x * x * x));
        a = 0.5 * x * (1.0 + th);
        da = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * kk * (1.0 + 3.0 * 0.044715 * x * x);
        ea = b.y;
        eda = b.slope;
      }
      kdu[i] = std::fabs(c[i]) * ea + kUnitF32 * std::fabs(c[i] * a);
      kdg[i] = cu * eda + 2 * kUnitF32 * cu * std::fabs(da);
      f_mag += (std::fabs(a) + std::fabs(x)) * cu;
    }
    const double f_err = gamma_n(T * n + 8, kUnitF64) * f_mag;
    expect_close(dg, numeric_grad(g, f, f_err), kdg, "dgate");
    expect_close(du, numeric_grad(u, f, f_err), kdu, "dup");
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
  // The kernel's rounding (sgemm sums, any order, Higham (3.5)): dx[t][k] = Σ_r dout[t][r]·w[r][k] within
  // γ_rows Σ_r |dout w|, dW[r][k] = Σ_t dout[t][r]·x[t][k] within γ_T Σ_t |dout x|, db[r] = Σ_t dout[t][r]
  // within γ_T Σ_t |dout|. f is linear in each variable, so its central difference has no truncation; the
  // objective in double: γ_{cols+T·rows+2}(u₆₄) Σ|c|(|b| + Σ|x w|).
  std::vector<double> kdx(T * cols, 0), kdw(rows * cols, 0), kdb(rows, 0);
  double f_mag = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      const double ct = std::fabs(c[t * rows + r]);
      double y = std::fabs(b[r]);
      for (int64_t k = 0; k < cols; ++k) {
        kdx[t * cols + k] += gamma_n(rows) * ct * std::fabs(w[r * cols + k]);
        kdw[r * cols + k] += gamma_n(T) * ct * std::fabs(x[t * cols + k]);
        y += std::fabs(double(x[t * cols + k]) * w[r * cols + k]);
      }
      kdb[r] += gamma_n(T) * ct;
      f_mag += ct * y;
    }
  const double f_err = gamma_n(cols + T * rows + 2, kUnitF64) * f_mag;
  expect_close(dx, numeric_grad(x, f, f_err), kdx, "dx");
  expect_close(dw, numeric_grad(w, f, f_err), kdw, "dw");
  expect_close(db, numeric_grad(b, f, f_err), kdb, "db");
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
      EXPECT_NEAR(dw[i], dw2[i], gamma_n(T) * mag + kUnitF32 * std::fabs(dw2[i]));
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
  // The kernel's rounding: cos and sin of the exact angle (pos·inv in double is exact) rounded to fp32 (u
  // each), then dx_i = c_i·cos ± c_{i+half}·sin with two products and a sum: with the tables' u, γ_3
  // (|c_i cos| + |c_{i+half} sin|). f is linear in x (no truncation); the objective in double: the angle's
  // cos/sin (2u₆₄), two products, the sum and ·c, over T·heads·D terms: γ_{T·heads·D+6}(u₆₄) Σ (|x_i| +
  // |x_{i+half}|)|c|.
  std::vector<double> kdx(T * heads * D);
  double f_mag = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const double a = double(pos[t]) * inv[i], co = std::fabs(std::cos(a)), si = std::fabs(std::sin(a));
        const int64_t j = (t * heads + h) * D + i, jh = j + half;
        kdx[j] = gamma_n(3) * (std::fabs(c[j]) * co + std::fabs(c[jh]) * si);
        kdx[jh] = gamma_n(3) * (std::fabs(c[jh]) * co + std::fabs(c[j]) * si);
        f_mag += (std::fabs(x[j]) + std::fabs(x[jh])) * (std::fabs(c[j]) + std::fabs(c[jh]));
      }
  expect_close(dx, numeric_grad(x, f, gamma_n(T * heads * D + 6, kUnitF64) * f_mag), kdx, "dx");
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
  const double ce_tol = 0.5 * (gpstream::testing::kUnitF32 *
                                   (std::fabs(losses[0]) + std::fabs(losses[1]) + std::fabs(losses[2])) +
                               2 * R * gpstream::testing::gamma_n(V + 3, gpstream::testing::kUnitF64) *
                                   (2 * zmax + std::log(double(V)) + 1));
  EXPECT_NEAR(0.5 * (losses[0] + losses[1] + losses[2]), f(), ce_tol);
  std::vector<float> dz(R * V);
  cross_entropy_backward(dz.data(), z.data(), y.data(), R, V, 0.5f);
  // The kernel's rounding: dz_j = 0.5·fast_exp(z_j − l) − 0.5·[j = y] with l = lse rounded to fp32: the
  // exponent is off by u|lse| (l) + u|z_j − lse| (the subtraction), fast_exp adds ~2e-7 ≈ 4u, ·0.5 is exact,
  // the target's subtraction u|dz_j|; lse itself (double) within γ_{V+3}(u₆₄)(2 max|z| + ln V + 1).
  // The objective's evaluation error: the per-row double bound above, R rows, · 0.5.
  std::vector<double> kdz(R * V);
  for (int64_t r = 0; r < R; ++r) {
    double m = -1e300, sum = 0;
    for (int64_t j = 0; j < V; ++j) m = std::max(m, double(z[r * V + j]));
    for (int64_t j = 0; j < V; ++j) sum += std::exp(z[r * V + j] - m);
    const double lse = m + std::log(sum);
    for (int64_t j = 0; j < V; ++j) {
      const size_t i = static_cast<size_t>(r * V + j);
      const double p = std::exp(z[i] - lse);
      kdz[i] = 0.5 * p *
                   (kUnitF32 * (std::fabs(lse) + std::fabs(z[i] - lse) + 4) +
                    gamma_n(V + 3, kUnitF64) * (2 * zmax + std::log(double(V)) + 1)) +
               kUnitF32 * std::fabs(dz[i]);
    }
  }
  const double f_err = 0.5 * R * gamma_n(V + 3, kUnitF64) * (2 * zmax + std::log(double(V)) + 1);
  expect_close(dz, numeric_grad(z, f, f_err), kdz, "dlogits");
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

// First-order rounding bounds of attention_forward_seq / attention_backward_seq
// (kernels/attention_backward.cpp) against exact arithmetic, per element, with dout = c; the magnitudes from
// the test's data in double. Forward, row i, visible key j:
//  - S = scale·q_i·k_j by sgemm (D products and alpha): |ΔS| ≤ a_ij = γ_{D+1} scale Σ|q k|. The soft-cap
//    C = cap·tanh(S/cap) has slope ≤ 1 and adds the division (u|S| through the slope), tanhf (2 ulp) and the
//    product: ΔC ≤ a + u|S| + 3u|C|.
//  - e_j = fast_exp(C_j − mx): the fp32 max cancels in the ratio, the subtraction adds u|C_j − mx|, fast_exp
//    ~2e-7 ≈ 4u: Δe_j/e_j ≤ ε_j = ΔC_j + u|C_j − mx| + 4u. P_j = e_j/Σe (positive terms: γ_T), 1/sum and
//    the product: ρ_j = ε_j + max_k ε_k + γ_{T+2} relative.
//  - out = Σ_j P_j v_j by sgemm: Σ_j ρ_j P_j|v_j| + γ_T Σ_j P_j|v_j|.
// Backward: dP_ij = c_i·v_j (D terms, γ_D Σ|c v|); dot_i = Σ_j P dP (T terms); dC = P(dP − dot) with the
// subtraction and product (2u); with a soft-cap, dS = dC·(1 − th²), th = tanhf(S/cap) off by
// (1 − th²)(a + u|S|)/cap + 2u|th|, 1 − th² by 2|th|Δth + u, the product u. dq = scale·Σ_j dS k_j and
// dk = scale·Σ_i dS q_i (sgemm with alpha, T terms at most: γ_{T+1}), dv = Σ_i P c_i (γ_T), each plus the
// propagated ΔdS / ρ.
// The double objective (attention_objective) is within γ_{D+2T+8}(u₆₄)(1 + 2 max|C|) of exact relative in
// every out (the exponent's absolute error becomes relative), |out| ≤ max|v|: eval = that · max|v| Σ|c|.
struct AttentionRounding {
  std::vector<double> out, dq, dk, dv;
  double eval = 0;
};
AttentionRounding attention_rounding(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, const std::vector<float>& c,
                                     const std::vector<float>& mask, int64_t T, int64_t D, double scale,
                                     double cap = 0) {
  const double u = kUnitF32;
  AttentionRounding b;
  b.out.assign(T * D, 0);
  b.dq.assign(T * D, 0);
  b.dk.assign(T * D, 0);
  b.dv.assign(T * D, 0);
  std::vector<double> dS(T * T, 0), ddS(T * T, 0), P(T * T, 0), rho(T * T, 0);
  double cmax = 0, vmax = 0, csum = 0;
  for (float x : v) vmax = std::max(vmax, double(std::fabs(x)));
  for (float x : c) csum += std::fabs(x);
  for (int64_t i = 0; i < T; ++i) {
    std::vector<double> S(T), a(T), C(T), dC(T);
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < T; ++j) {
      if (std::isinf(mask[i * T + j])) continue;
      double d = 0, m = 0;
      for (int64_t e = 0; e < D; ++e) {
        d += double(q[i * D + e]) * k[j * D + e];
        m += std::fabs(double(q[i * D + e]) * k[j * D + e]);
      }
      S[j] = scale * d;
      a[j] = gamma_n(D + 1) * scale * m;
      C[j] = cap > 0 ? cap * std::tanh(S[j] / cap) : S[j];
      dC[j] = cap > 0 ? a[j] + u * std::fabs(S[j]) + 3 * u * std::fabs(C[j]) : a[j];
      mx = std::max(mx, C[j]);
      cmax = std::max(cmax, std::fabs(C[j]));
    }
    if (std::isinf(mx)) continue;  // sees nothing: out = 0, no gradient
    double sum = 0, eps_max = 0;
    std::vector<double> eps(T, 0);
    for (int64_t j = 0; j < T; ++j) {
      if (std::isinf(mask[i * T + j])) continue;
      sum += std::exp(C[j] - mx);
      eps[j] = dC[j] + u * std::fabs(C[j] - mx) + 4 * u;
      eps_max = std::max(eps_max, eps[j]);
    }
    for (int64_t j = 0; j < T; ++j) {
      if (std::isinf(mask[i * T + j])) continue;
      P[i * T + j] = std::exp(C[j] - mx) / sum;
      rho[i * T + j] = eps[j] + eps_max + gamma_n(T + 2);
    }
    for (int64_t e = 0; e < D; ++e)
      for (int64_t j = 0; j < T; ++j) {
        const double pv = P[i * T + j] * std::fabs(v[j * D + e]);
        b.out[i * D + e] += rho[i * T + j] * pv + gamma_n(T) * pv;
      }
    std::vector<double> dP(T, 0), bdP(T, 0);
    double dot = 0, ddot = 0, dot_abs = 0;
    for (int64_t j = 0; j < T; ++j) {
      if (std::isinf(mask[i * T + j])) continue;
      double m = 0;
      for (int64_t e = 0; e < D; ++e) {
        dP[j] += double(c[i * D + e]) * v[j * D + e];
        m += std::fabs(double(c[i * D + e]) * v[j * D + e]);
      }
      bdP[j] = gamma_n(D) * m;
      const double p = P[i * T + j];
      dot += p * dP[j];
      dot_abs += p * std::fabs(dP[j]);
      ddot += rho[i * T + j] * p * std::fabs(dP[j]) + p * bdP[j];
    }
    ddot += gamma_n(T) * dot_abs;
    for (int64_t j = 0; j < T; ++j) {
      if (std::isinf(mask[i * T + j])) continue;
      const double p = P[i * T + j], g = p * (dP[j] - dot);
      double dg = rho[i * T + j] * p * std::fabs(dP[j] - dot) + p * (bdP[j] + ddot) +
                  2 * u * p * (std::fabs(dP[j]) + std::fabs(dot));
      double gs = g;
      if (cap > 0) {
        const double th = std::tanh(S[j] / cap), sl = 1 - th * th;
        const double dth = sl * (a[j] + u * std::fabs(S[j])) / cap + 2 * u * std::fabs(th);
        gs = g * sl;
        dg = dg * sl + std::fabs(g) * (2 * std::fabs(th) * dth + u) + u * std::fabs(gs);
      }
      dS[i * T + j] = gs;
      ddS[i * T + j] = dg;
    }
  }
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      const double s_abs = std::fabs(dS[i * T + j]), ds = ddS[i * T + j], p = P[i * T + j];
      for (int64_t e = 0; e < D; ++e) {
        b.dq[i * D + e] += scale * (ds + gamma_n(T + 1) * s_abs) * std::fabs(k[j * D + e]);
        b.dk[j * D + e] += scale * (ds + gamma_n(T + 1) * s_abs) * std::fabs(q[i * D + e]);
        b.dv[j * D + e] += (rho[i * T + j] + gamma_n(T)) * p * std::fabs(c[i * D + e]);
      }
    }
  b.eval = gamma_n(D + 2 * T + 8, kUnitF64) * (1 + 2 * cmax) * vmax * csum;
  return b;
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
  // The kernel within attention_rounding's bound of exact, the double reference within u|ref| (its rounding
  // to fp32; its own double error is ~2^-29 of the fp32 terms).
  const AttentionRounding rb = attention_rounding(q, k, v, c, mask, T, D, scale);
  for (int64_t i = 0; i < T * D; ++i)
    EXPECT_NEAR(out[i], out_ref[i], rb.out[i] + kUnitF32 * std::fabs(out_ref[i])) << i;
  for (int64_t e = 0; e < D; ++e) EXPECT_EQ(out[7 * D + e], 0.0f);  // the row that sees nothing
  // Forward against the independent double objective: Σ|c|·Δout, the double sum γ_{T·D}(u₆₄) Σ|out c|, and
  // the objective's own error.
  double s = 0, s_tol = rb.eval;
  for (int64_t i = 0; i < T * D; ++i) {
    s += double(out[i]) * c[i];
    s_tol += std::fabs(c[i]) * rb.out[i] + gamma_n(T * D, kUnitF64) * std::fabs(double(out[i]) * c[i]);
  }
  EXPECT_NEAR(s, attention_objective(q, k, v, groups, ns, nt, T, D, scale, c), s_tol);

  std::vector<float> dq(T * D, 0), dk(T * D, 0), dv(T * D, 0), scratch(T * T);
  attention_backward_seq(dq.data(), D, dk.data(), dv.data(), D, scratch.data(), c.data(), D, probs.data(),
                         q.data(), D, k.data(), v.data(), D, T, D, scale);
  auto f = [&] { return attention_objective(q, k, v, groups, ns, nt, T, D, scale, c); };
  expect_close(dq, numeric_grad(q, f, rb.eval), rb.dq, "dq");
  expect_close(dk, numeric_grad(k, f, rb.eval), rb.dk, "dk");
  expect_close(dv, numeric_grad(v, f, rb.eval), rb.dv, "dv");
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
  attention_forward_seq(out.data(), D, probs.data(), q.data(), D, k.data(), v.data(), D, mask.data(), T, D,
                        scale, nullptr, cap);
  attention_forward_seq_ref(out_ref.data(), D, nullptr, q.data(), D, k.data(), v.data(), D, mask.data(), T, D,
                            scale, cap);
  // As in StructuredMaskMatchesFiniteDifferences, with the soft-cap's roundings.
  const AttentionRounding rb = attention_rounding(q, k, v, c, mask, T, D, scale, cap);
  for (int64_t i = 0; i < T * D; ++i)
    EXPECT_NEAR(out[i], out_ref[i], rb.out[i] + kUnitF32 * std::fabs(out_ref[i])) << i;
  double s = 0, s_tol = rb.eval;
  for (int64_t i = 0; i < T * D; ++i) {
    s += double(out[i]) * c[i];
    s_tol += std::fabs(c[i]) * rb.out[i] + gamma_n(T * D, kUnitF64) * std::fabs(double(out[i]) * c[i]);
  }
  auto f = [&] { return attention_objective(q, k, v, groups, ns, nt, T, D, scale, c, cap, window); };
  EXPECT_NEAR(s, f(), s_tol);
  std::vector<float> dq(T * D, 0), dk(T * D, 0), dv(T * D, 0), scratch(2 * T * T);
  attention_backward_seq(dq.data(), D, dk.data(), dv.data(), D, scratch.data(), c.data(), D, probs.data(),
                         q.data(), D, k.data(), v.data(), D, T, D, scale, nullptr, cap);
  expect_close(dq, numeric_grad(q, f, rb.eval), rb.dq, "dq");
  expect_close(dk, numeric_grad(k, f, rb.eval), rb.dk, "dk");
  expect_close(dv, numeric_grad(v, f, rb.eval), rb.dv, "dv");
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
  // Both runs are fp32 kernels within attention_rounding's bound of exact, so they differ by at most twice
  // it (the blocked products sum fewer zero terms, in other sgemm blockings).
  const AttentionRounding rb = attention_rounding(q, k, v, c, mask, T, D, 0.3f);
  for (int64_t i = 0; i < T * D; ++i) ASSERT_NEAR(o1[i], o2[i], 2 * rb.out[i]) << i;
  std::vector<float> dq1(T * D, 0), dk1(T * D, 0), dv1(T * D, 0), dq2(T * D, 0), dk2(T * D, 0), dv2(T * D, 0);
  attention_backward_seq(dq1.data(), D, dk1.data(), dv1.data(), D, s.data(), c.data(), D, p1.data(), q.data(),
                         D, k.data(), v.data(), D, T, D, 0.3f);
  attention_backward_seq(dq2.data(), D, dk2.data(), dv2.data(), D, s.data(), c.data(), D, p2.data(), q.data(),
                         D, k.data(), v.data(), D, T, D, 0.3f, row_end.data());
  for (int64_t i = 0; i < T * D; ++i) {
    ASSERT_NEAR(dq1[i], dq2[i], 2 * rb.dq[i]) << i;
    ASSERT_NEAR(dk1[i], dk2[i], 2 * rb.dk[i]) << i;
    ASSERT_NEAR(dv1[i], dv2[i], 2 * rb.dv[i]) << i;
  }
}

}  // namespace
}  // namespace gpstream::kernels
