// Real FFT against a plain O(n^2) DFT in long double (the oracle), for several sizes and inputs.
#include "audio/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

namespace gpstream::audio {
namespace {

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
      EXPECT_NEAR(got[k].real(), static_cast<double>(want[k].real()), 1e-12) << "n=" << n << " k=" << k;
      EXPECT_NEAR(got[k].imag(), static_cast<double>(want[k].imag()), 1e-12) << "n=" << n << " k=" << k;
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
  for (size_t k = 0; k <= n / 2; ++k) EXPECT_NEAR(std::abs(X[k]), 1.0, 1e-13);
  for (size_t t = 0; t < n; ++t) x[t] = std::cos(2 * std::numbers::pi * 37 * t / n);
  fft.forward(x.data(), X.data());
  for (size_t k = 0; k <= n / 2; ++k) EXPECT_NEAR(std::abs(X[k]), k == 37 ? n / 2.0 : 0.0, 1e-10) << k;
}

}  // namespace
}  // namespace gpstream::audio
