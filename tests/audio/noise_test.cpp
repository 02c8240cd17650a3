// Seeded additive noise: the SNR of the mix, measured as the power ratio of (noisy - clean) to clean in
// double, equals the drawn SNR; draws cover the configured range and fractions; the same seed gives the same
// bits and other seeds, epochs or utterances other bits; white noise has a flat spectrum and pink noise a
// 1/f one (log-log slope of an averaged periodogram: 0 and -1 by definition).
#include "audio/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "../testing/fp_bounds.h"
#include "audio/fft.h"

namespace gpstream::audio {
namespace {

// A speech-like test signal: two tones, an amplitude envelope and 0.1 s of silence at each end.
std::vector<float> test_signal(size_t n) {
  std::vector<float> s(n, 0.0f);
  for (size_t i = 1600; i + 1600 < n; ++i) {
    const double t = static_cast<double>(i) / 16000.0;
    s[i] = static_cast<float>(
        (0.3 + 0.2 * std::sin(2 * std::numbers::pi * 3 * t)) *
        (std::sin(2 * std::numbers::pi * 220 * t) + 0.5 * std::sin(2 * std::numbers::pi * 1330 * t)));
  }
  return s;
}

double mean_square(const std::vector<double>& v) {
  double p = 0;
  for (double x : v) p += x * x;
  return p / static_cast<double>(v.size());
}

// 10 log10(P(clean) / P(noisy - clean)), all in double.
double measured_snr_db(const std::vector<float>& clean, const std::vector<float>& noisy) {
  std::vector<double> c(clean.begin(), clean.end()), d(clean.size());
  for (size_t i = 0; i < clean.size(); ++i) d[i] = static_cast<double>(noisy[i]) - clean[i];
  return 10.0 * std::log10(mean_square(c) / mean_square(d));
}

NoiseOptions fixed(double snr_db, double pink_fraction) {
  NoiseOptions o;
  o.snr_min_db = o.snr_max_db = snr_db;
  o.pink_fraction = pink_fraction;
  return o;
}

TEST(Noise, MixHasTheRequestedSnr) {
  const auto clean = test_signal(32000);
  for (double pink : {0.0, 1.0}) {
    for (double snr : {-5.0, 0.0, 10.0, 17.5, 30.0, 60.0}) {
      auto noisy = clean;
      auto d = add_noise(noisy, fixed(snr, pink), 1234);
      ASSERT_TRUE(d.ok()) << d.error().message();
      EXPECT_FALSE(d->clean);
      EXPECT_EQ(d->color, pink == 1.0 ? NoiseColor::Pink : NoiseColor::White);
      EXPECT_DOUBLE_EQ(d->snr_db, snr);
      EXPECT_NEAR(measured_snr_db(clean, noisy), snr, gpstream::testing::fp32_mix_snr_bound_db(snr))
          << "snr " << snr << " pink " << pink;
    }
  }
}

TEST(Noise, DrawnSnrIsTheMeasuredOneAndWithinTheRange) {
  const auto clean = test_signal(8000);
  NoiseOptions o;  // 10..30 dB, half pink
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto noisy = clean;
    auto d = add_noise(noisy, o, seed);
    ASSERT_TRUE(d.ok());
    EXPECT_GE(d->snr_db, 10.0);
    EXPECT_LE(d->snr_db, 30.0);
    EXPECT_NEAR(measured_snr_db(clean, noisy), d->snr_db, gpstream::testing::fp32_mix_snr_bound_db(d->snr_db))
        << "seed " << seed;
  }
}

TEST(Noise, DrawsCoverTheRangeAndFractions) {
  NoiseOptions o;
  o.snr_min_db = 10.0;
  o.snr_max_db = 30.0;
  o.pink_fraction = 0.3;
  o.clean_fraction = 0.25;
  const int n = 4000;
  double sum = 0, lo = 1e9, hi = -1e9;
  int pink = 0, clean = 0;
  for (int i = 0; i < n; ++i) {
    const NoiseDraw d = draw_noise(o, noise_seed(7, 0, static_cast<uint64_t>(i)));
    sum += d.snr_db;
    lo = std::min(lo, d.snr_db);
    hi = std::max(hi, d.snr_db);
    pink += d.color == NoiseColor::Pink;
    clean += d.clean;
  }
  // Uniform on [10, 30]: mean 20, standard error 20/sqrt(12 n) = 0.09.
  EXPECT_NEAR(sum / n, 20.0, 0.5);
  EXPECT_GE(lo, 10.0);
  EXPECT_LT(lo, 10.1);
  EXPECT_LE(hi, 30.0);
  EXPECT_GT(hi, 29.9);
  // Binomial standard errors: 0.007 for 0.3 and 0.25.
  EXPECT_NEAR(static_cast<double>(pink) / n, 0.3, 0.035);
  EXPECT_NEAR(static_cast<double>(clean) / n, 0.25, 0.035);
}

TEST(Noise, SameSeedSameBitsOtherSeedsOtherBits) {
  const auto clean = test_signal(4000);
  NoiseOptions o;
  auto a = clean, b = clean, c = clean;
  ASSERT_TRUE(add_noise(a, o, 99).ok());
  ASSERT_TRUE(add_noise(b, o, 99).ok());
  ASSERT_TRUE(add_noise(c, o, 100).ok());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, clean);
  for (NoiseColor color : {NoiseColor::White, NoiseColor::Pink}) {
    std::vector<float> x(1000), y(1000), z(1000);
    generate_noise(color, 5, x);
    generate_noise(color, 5, y);
    generate_noise(color, 6, z);
    EXPECT_EQ(x, y);
    EXPECT_NE(x, z);
  }
}

TEST(Noise, SeedsDependOnSeedEpochAndUtterance) {
  const uint64_t key = noise_utterance_key(std::string_view("wav/train-000001.wav"));
  EXPECT_EQ(noise_seed(1, 0, key), noise_seed(1, 0, key));
  EXPECT_NE(noise_seed(1, 0, key), noise_seed(2, 0, key));
  EXPECT_NE(noise_seed(1, 0, key), noise_seed(1, 1, key));
  EXPECT_NE(noise_seed(1, 0, key),
            noise_seed(1, 0, noise_utterance_key(std::string_view("wav/train-000002.wav"))));
  // Swapping epoch and utterance must not give the same seed.
  EXPECT_NE(noise_seed(1, 2, 3), noise_seed(1, 3, 2));
  // FNV-1a 64 of "a", from the published test vectors (Fowler, Noll, Vo).
  EXPECT_EQ(noise_utterance_key(std::string_view("a")), 0xAF63DC4C8601EC8Cull);
  EXPECT_EQ(noise_utterance_key(std::string_view("")), 0xCBF29CE484222325ull);
}

TEST(Noise, CleanDrawsAndSilenceAreLeftUnchanged) {
  const auto clean = test_signal(4000);
  NoiseOptions all_clean;
  all_clean.clean_fraction = 1.0;
  auto x = clean;
  auto d = add_noise(x, all_clean, 3);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->clean);
  EXPECT_EQ(x, clean);

  std::vector<float> silence(4000, 0.0f);
  auto s = add_noise(silence, NoiseOptions{}, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->clean);
  EXPECT_EQ(silence, std::vector<float>(4000, 0.0f));

  std::vector<float> empty;
  EXPECT_TRUE(add_noise(empty, NoiseOptions{}, 3).ok());
}

TEST(Noise, RejectsInvalidOptions) {
  const auto bad = [](NoiseOptions o, const std::string& what) {
    std::vector<float> x(10, 0.5f);
    auto r = add_noise(x, o, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find(what), std::string::npos) << r.error().message();
    EXPECT_EQ(x, std::vector<float>(10, 0.5f));
  };
  NoiseOptions o;
  o.snr_min_db = 31;
  bad(o, "above maximum");
  o = {};
  o.snr_max_db = NAN;
  bad(o, "finite");
  o = {};
  o.snr_min_db = -31;
  bad(o, "within [-30, 100]");
  o = {};
  o.pink_fraction = 1.5;
  bad(o, "pink fraction");
  o = {};
  o.clean_fraction = -0.1;
  bad(o, "clean fraction");
  EXPECT_TRUE(validate_noise_options(NoiseOptions{}).ok());
}

// Mean of squares of 2^16 samples, averaged over 20 seeds: 1 for both colours. A statistic, not rounding:
// for white noise x² has variance 2 (x ~ N(0, 1)), so the mean of 20·2^16 of them has standard deviation
// √(2/(20·2^16)) = 1.2e-3, and the tolerance is 5 of those (6.2e-3). Pink noise keeps 0.1: its rows are
// correlated over long spans, a spread not derived here.
TEST(Noise, UnitPower) {
  for (NoiseColor color : {NoiseColor::White, NoiseColor::Pink}) {
    double total = 0;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      std::vector<float> x(1 << 16);
      generate_noise(color, seed, x);
      std::vector<double> d(x.begin(), x.end());
      total += mean_square(d);
    }
    EXPECT_NEAR(total / 20, 1.0, color == NoiseColor::White ? 5 * std::sqrt(2.0 / (20 << 16)) : 0.1);
  }
}

// Least-squares slope of ln(power) against ln(frequency) over 62.5 Hz .. 4 kHz (at 16 kHz), from the mean
// periodogram of 512-sample Hann-windowed blocks of 2^17 samples.
double spectral_slope(NoiseColor color) {
  const size_t n = 512, total = size_t{1} << 17;
  std::vector<float> x(total);
  generate_noise(color, 42, x);
  RealFft fft(n);
  std::vector<double> block(n), power(n / 2 + 1, 0.0);
  std::vector<std::complex<double>> spectrum(n / 2 + 1);
  for (size_t start = 0; start + n <= total; start += n) {
    for (size_t t = 0; t < n; ++t)
      block[t] = x[start + t] * (0.5 - 0.5 * std::cos(2 * std::numbers::pi * t / n));
    fft.forward(block.data(), spectrum.data());
    for (size_t k = 0; k <= n / 2; ++k) power[k] += std::norm(spectrum[k]);
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (size_t k = 1; k <= n / 2; ++k) {
    const double hz = 16000.0 * static_cast<double>(k) / n;
    if (hz < 62.5 || hz > 4000) continue;
    const double lx = std::log(hz), ly = std::log(power[k]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, ++m;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

// White: a statistic, not rounding. Each bin's power is a mean over 256 blocks of an exponential variable,
// so ln(power) has standard deviation ≈ 1/√256; Hann-windowed neighbours are correlated (power correlation
// (2/3)² and (1/6)² at distances 1 and 2), which scales the variance of a weighted sum by at most the
// correlation matrix's largest eigenvalue, ≤ 1 + 2(4/9 + 1/36). The least-squares slope over the 127 bins
// has standard deviation ≤ (1/16)·√(that / Σ(ln f − mean)²) ≈ 8.9e-3; the tolerance is 5 of those.
// Pink keeps 0.15: the Voss–McCartney generator's deviation from 1/f is a model error not derived here.
TEST(Noise, WhiteIsFlatAndPinkFallsAsOneOverF) {
  double sxx = 0, sx = 0;
  int m = 0;
  for (size_t k = 1; k <= 256; ++k) {
    const double hz = 16000.0 * static_cast<double>(k) / 512;
    if (hz < 62.5 || hz > 4000) continue;
    sx += std::log(hz), sxx += std::log(hz) * std::log(hz), ++m;
  }
  const double slope_sd = (1.0 / 16) * std::sqrt((1 + 2 * (4.0 / 9 + 1.0 / 36)) / (sxx - sx * sx / m));
  EXPECT_NEAR(spectral_slope(NoiseColor::White), 0.0, 5 * slope_sd);
  EXPECT_NEAR(spectral_slope(NoiseColor::Pink), -1.0, 0.15);
}

}  // namespace
}  // namespace gpstream::audio
