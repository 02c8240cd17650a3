// Real FFT against a plain O(n^2) DFT in long double (the oracle), for several sizes and inputs.
#include "audio/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "../testing/fp_bounds.h"

namespace gpstream::audio {
namespace {

// Error bound of RealFft against the exact DFT, per output (double, u = 2^-53; Higham §24.1, Thm 24.2):
// twiddles e^{-2πij/m} have their angle rounded twice (·j, /m; ≤ 2u·π absolute, plus π's own u) and cos/sin
// once: μ ≤ (3π + 1)u. A radix-2 stage (a complex product and an add) has η = μ + γ_4(√2 + μ); log2(n/2)
// stages over the packed z (‖Z‖₂ = √(n/2)·‖x‖₂) give ‖ΔZ‖₂ ≤ log2(n/2)·η/(1 − log2(n/2)·η)·‖Z‖₂. The
// split out_k = even + w·odd combines two Z entries (2‖ΔZ‖) and rounds once more like a stage (2η‖Z‖).
// The long double reference (u = 2^-64) and its rounding to double (u|X_k|) come on top.
double fft_bound(size_t n, double x_norm2, double out_abs) {
  const double u = gpstream::testing::kUnitF64;
  const double mu = (3 * std::numbers::pi + 1) * u;
  const double eta = mu + gpstream::testing::gamma_n(4, u) * (std::sqrt(2.0) + mu);
  const double stages = std::log2(static_cast<double>(n / 2));
  const double z_norm = std::sqrt(static_cast<double>(n / 2)) * x_norm2;
  return 2 * stages * eta / (1 - stages * eta) * z_norm + 2 * eta * z_norm + u * out_abs;
}

double norm2(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

std::vector<std::complex<long double>> naive_dft(const std::vector<double>& x) {
  const size_t n = x.size();
  std::vector<std::complex<long double>> out(n / 2 + 1);
  for (size_t k = 0; k <= n / 2; ++k) {
    std::complex<long double> acc = 0;
    for (size_t t = 0; t < n; ++t) {
      const long double a =
          -2.0L * std::numbers::pi_v<long double> * static_cast<long double>((k * t) % n) / n;
      acc += static_cast<long double>(x[t]) * std::complex<long double>(std::cos(a), std::sin(a));
    }
    out[k] = acc;
  }
  return out;
}

TEST(RealFft, MatchesNaiveDft) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t n : {4u, 8u, 16u, 64u, 512u}) {
    std::vector<double> x(n);
    for (auto& v : x) v = u(rng);
    std::vector<std::complex<double>> got(n / 2 + 1);
    RealFft fft(n);
    fft.forward(x.data(), got.data());
    const auto want = naive_dft(x);
    for (size_t k = 0; k <= n / 2; ++k) {
      const double tol = fft_bound(n, norm2(x), static_cast<double>(std::abs(want[k])));
      EXPECT_NEAR(got[k].real(), static_cast<double>(want[k].real()), tol) << "n=" << n << " k=" << k;
      EXPECT_NEAR(got[k].imag(), static_cast<double>(want[k].imag()), tol) << "n=" << n << " k=" << k;
    }
  }
}

TEST(RealFft, ImpulseAndCosine) {
  const size_t n = 512;
  RealFft fft(n);
  std::vector<double> x(n, 0.0);
  std::vector<std::complex<double>> X(n / 2 + 1);
  x[3] = 1.0;  // e^(-2 pi i k 3 / n)
  fft.forward(x.data(), X.data());
  // |X_k| = 1: fft_bound for ‖x‖₂ = 1, plus std::abs's rounding.
  const double u = gpstream::testing::kUnitF64;
  for (size_t k = 0; k <= n / 2; ++k) EXPECT_NEAR(std::abs(X[k]), 1.0, fft_bound(n, 1.0, 1.0) + u);
  // The samples themselves are off by ≤ 2u·a_t (the angle a_t = 2π·37·t/n rounds twice) + u (cos), which
  // the DFT sums with weight 1: Σ_t (2u·a_t + u) on top of fft_bound.
  double input_err = 0;
  for (size_t t = 0; t < n; ++t) {
    x[t] = std::cos(2 * std::numbers::pi * 37 * t / n);
    input_err += 2 * u * (2 * std::numbers::pi * 37 * static_cast<double>(t) / static_cast<double>(n)) + u;
  }
  fft.forward(x.data(), X.data());
  for (size_t k = 0; k <= n / 2; ++k) {
    const double want = k == 37 ? n / 2.0 : 0.0;
    EXPECT_NEAR(std::abs(X[k]), want, fft_bound(n, norm2(x), want) + input_err + u * want) << k;
  }
}

}  // namespace
}  // namespace gpstream::audio
