// CTC loss and gradient (ctc_loss.h).
#include "kernels/ctc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace gpstream::kernels {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

}  // namespace

double ctc_loss(float* dlogits, const float* logits, int64_t T, int64_t V, const int32_t* labels, int64_t L,
                float scale) {
  if (dlogits) std::fill(dlogits, dlogits + T * V, 0.0f);
  if (T <= 0) return L == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  // log-softmax per frame
  std::vector<double> lp(static_cast<size_t>(T * V));
  for (int64_t t = 0; t < T; ++t) {
    const float* z = logits + t * V;
    double m = z[0];
    for (int64_t k = 1; k < V; ++k) m = std::max(m, double(z[k]));
    double s = 0;
    for (int64_t k = 0; k < V; ++k) s += std::exp(double(z[k]) - m);
    const double lse = m + std::log(s);
    for (int64_t k = 0; k < V; ++k) lp[static_cast<size_t>(t * V + k)] = double(z[k]) - lse;
  }
  // Extended labels: blank, l1, blank, l2, ..., blank.
  const int64_t S = 2 * L + 1;
  std::vector<int32_t> ext(static_cast<size_t>(S), 0);
  for (int64_t i = 0; i < L; ++i) ext[static_cast<size_t>(2 * i + 1)] = labels[i];
  auto emit = [&](int64_t t, int64_t s) {
    return lp[static_cast<size_t>(t * V + ext[static_cast<size_t>(s)])];
  };
  auto skip_ok = [&](int64_t s) {  // may come from s − 2 (a label differing from the one two back)
    return s >= 2 && ext[static_cast<size_t>(s)] != 0 &&
           ext[static_cast<size_t>(s)] != ext[static_cast<size_t>(s - 2)];
  };
  std::vector<double> alpha(static_cast<size_t>(T * S), kNegInf), beta(static_cast<size_t>(T * S), kNegInf);
  auto A = [&](int64_t t, int64_t s) -> double& { return alpha[static_cast<size_t>(t * S + s)]; };
  auto B = [&](int64_t t, int64_t s) -> double& { return beta[static_cast<size_t>(t * S + s)]; };
  A(0, 0) = emit(0, 0);
  if (S > 1) A(0, 1) = emit(0, 1);
  for (int64_t t = 1; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) {
      double a = A(t - 1, s);
      if (s >= 1) a = log_add(a, A(t - 1, s - 1));
      if (skip_ok(s)) a = log_add(a, A(t - 1, s - 2));
      A(t, s) = a == kNegInf ? kNegInf : a + emit(t, s);
    }
  double logp = A(T - 1, S - 1);
  if (S > 1) logp = log_add(logp, A(T - 1, S - 2));
  if (logp == kNegInf) return std::numeric_limits<double>::infinity();
  if (!dlogits) return -logp;

  B(T - 1, S - 1) = emit(T - 1, S - 1);
  if (S > 1) B(T - 1, S - 2) = emit(T - 1, S - 2);
  for (int64_t t = T - 2; t >= 0; --t)
    for (int64_t s = 0; s < S; ++s) {
      double b = B(t + 1, s);
      if (s + 1 < S) b = log_add(b, B(t + 1, s + 1));
      if (s + 2 < S && skip_ok(s + 2)) b = log_add(b, B(t + 1, s + 2));
      B(t, s) = b == kNegInf ? kNegInf : b + emit(t, s);
    }
  // γ_t(k) = Σ_{s: ext[s] = k} exp(α_t(s) + β_t(s) − lp_t(ext[s]) − log p); d/dz = softmax − γ.
  std::vector<double> gamma(static_cast<size_t>(V));
  for (int64_t t = 0; t < T; ++t) {
    std::fill(gamma.begin(), gamma.end(), 0.0);
    for (int64_t s = 0; s < S; ++s) {
      const double v = A(t, s) + B(t, s);
      if (v == kNegInf) continue;
      gamma[static_cast<size_t>(ext[static_cast<size_t>(s)])] += std::exp(v - emit(t, s) - logp);
    }
    for (int64_t k = 0; k < V; ++k)
      dlogits[t * V + k] = static_cast<float>(
          scale * (std::exp(lp[static_cast<size_t>(t * V + k)]) - gamma[static_cast<size_t>(k)]));
  }
  return -logp;
}

}  // namespace gpstream::kernels
