// Seeded additive noise: the SNR of the mix, measured as the power ratio of (noisy - clean) to clean in
// double, equals the drawn SNR; draws cover the configured range and fractions; the same seed gives the same
// bits and other seeds, epochs or utterances other bits; white noise has a flat spectrum and pink noise a
// 1/f one (log-log slope of an averaged periodogram: 0 and -1 by definition).
#include "audio/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <iostream>
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
  // Statistics of n independent draws (each a uniform of the top 53 bits of a SplitMix64 output), each within
  // 5 standard deviations. The SNR is uniform on [10, 30]: its mean has standard deviation 20/√(12n) = 0.091
  // (tolerance 0.46). Colour and cleanliness are Bernoulli(p): a fraction has standard deviation √(p(1 −
  // p)/n), 7.2e-3 for p = 0.3 and 6.8e-3 for 0.25 (tolerances 0.036 and 0.034). The extremes: no draw
  // below 10.1 (or above 29.9) has probability (1 − 0.1/20)^n = e^-20 for a correct draw.
  const double sd_mean = 20.0 / std::sqrt(12.0 * n);
  const auto sd_fraction = [&](double p) { return std::sqrt(p * (1 - p) / n); };
  EXPECT_NEAR(sum / n, 20.0, 5 * sd_mean);
  EXPECT_GE(lo, 10.0);
  EXPECT_LT(lo, 10.1);
  EXPECT_LE(hi, 30.0);
  EXPECT_GT(hi, 29.9);
  EXPECT_NEAR(static_cast<double>(pink) / n, 0.3, 5 * sd_fraction(0.3));
  EXPECT_NEAR(static_cast<double>(clean) / n, 0.25, 5 * sd_fraction(0.25));
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

// Pink noise as generate_noise builds it (noise.h, Voss–McCartney): sample i is (Σ_r R_r + G_i)/√(rows + 1),
// with independent standard Gaussians. Row r is redrawn at the samples i > 0 with exactly r trailing zero
// bits, i = 2^r(2k + 1), so it holds one value on each run [2^r(2k − 1), 2^r(2k + 1)): run k = (i + 2^r) >>
// (r + 1). The fresh G_i is "row" kPinkNoiseRows here, a run of its own per sample.
int64_t pink_run(int row, int64_t i) {
  return row == kPinkNoiseRows ? i : (i + (int64_t{1} << row)) >> (row + 1);
}
constexpr double kPinkVariance = 1.0 / (kPinkNoiseRows + 1);  // s² of each Gaussian term

// Variance of the mean of squares of the first n samples of one pink seed. The samples are jointly Gaussian
// with Cov(y_i, y_j) = s²·Σ_r a_r(i, j), a_r = 1 when i and j lie in one run of row r (fresh included), so
// Var(Σ y_i²) = 2 Σ_ij Cov(y_i, y_j)² (Isserlis) = 2 s⁴ Σ_{r, r'} Σ_ij a_r a_r' = 2 s⁴ Σ_{r, r'} Σ_c |c|²,
// c the cells (intervals) on which both row r's and row r''s runs are constant.
double pink_mean_square_variance(int64_t n) {
  double total = 0;
  for (int r = 0; r <= kPinkNoiseRows; ++r)
    for (int q = 0; q <= kPinkNoiseRows; ++q) {
      double len = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0 && (pink_run(r, i) != pink_run(r, i - 1) || pink_run(q, i) != pink_run(q, i - 1))) {
          total += len * len;
          len = 0;
        }
        ++len;
      }
      total += len * len;
    }
  return 2 * kPinkVariance * kPinkVariance * total / (static_cast<double>(n) * static_cast<double>(n));
}

// Mean of squares of 2^16 samples, averaged over 20 seeds: 1 for both colours (white: N(0, 1); pink: rows + 1
// unit Gaussians over √(rows + 1)). A statistic, not rounding (the fp32 samples round at 2^-24 relative, far
// below): for white noise x² has variance 2, so the mean of 20·2^16 of them has standard deviation
// √(2/(20·2^16)) = 1.2e-3; for pink noise the rows hold their values over long runs (row 15 has two per
// seed), and pink_mean_square_variance gives one seed's variance, 0.04 (standard deviation 0.045 over 20
// seeds). The tolerance is 5 standard deviations.
TEST(Noise, UnitPower) {
  const int64_t n = int64_t{1} << 16;
  const int seeds = 20;
  const double sd_white = std::sqrt(2.0 / (static_cast<double>(seeds) * static_cast<double>(n)));
  const double sd_pink = std::sqrt(pink_mean_square_variance(n) / seeds);
  for (NoiseColor color : {NoiseColor::White, NoiseColor::Pink}) {
    double total = 0;
    for (uint64_t seed = 0; seed < static_cast<uint64_t>(seeds); ++seed) {
      std::vector<float> x(static_cast<size_t>(n));
      generate_noise(color, seed, x);
      std::vector<double> d(x.begin(), x.end());
      total += mean_square(d);
    }
    const double sd = color == NoiseColor::White ? sd_white : sd_pink;
    EXPECT_NEAR(total / seeds, 1.0, 5 * sd)
        << (color == NoiseColor::White ? "white" : "pink") << ", sd " << sd;
  }
}

// The periodogram of spectral_slope: 512-sample Hann-windowed blocks of 2^17 samples at 16 kHz, fitted over
// 62.5 Hz .. 4 kHz.
constexpr size_t kBlock = 512, kTotal = size_t{1} << 17;
std::vector<size_t> fit_bins() {
  std::vector<size_t> bins;
  for (size_t k = 1; k <= kBlock / 2; ++k) {
    const double hz = 16000.0 * static_cast<double>(k) / kBlock;
    if (hz >= 62.5 && hz <= 4000) bins.push_back(k);
  }
  return bins;
}
double hann(size_t t) {
  return 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(t) / kBlock);
}

// Least-squares weights of the slope: slope = Σ_k c_k ln P_k, c_k = (ln f_k − mean) / Σ(ln f − mean)².
std::vector<double> slope_weights(const std::vector<size_t>& bins) {
  double mean = 0, sxx = 0;
  for (size_t k : bins) mean += std::log(static_cast<double>(k));
  mean /= static_cast<double>(bins.size());
  for (size_t k : bins) sxx += std::pow(std::log(static_cast<double>(k)) - mean, 2);
  std::vector<double> c;
  for (size_t k : bins) c.push_back((std::log(static_cast<double>(k)) - mean) / sxx);
  return c;
}

// Least-squares slope of ln(power) against ln(frequency), from the mean periodogram.
double spectral_slope(NoiseColor color) {
  std::vector<float> x(kTotal);
  generate_noise(color, 42, x);
  RealFft fft(kBlock);
  std::vector<double> block(kBlock), power(kBlock / 2 + 1, 0.0);
  std::vector<std::complex<double>> spectrum(kBlock / 2 + 1);
  for (size_t start = 0; start + kBlock <= kTotal; start += kBlock) {
    for (size_t t = 0; t < kBlock; ++t) block[t] = x[start + t] * hann(t);
    fft.forward(block.data(), spectrum.data());
    for (size_t k = 0; k <= kBlock / 2; ++k) power[k] += std::norm(spectrum[k]);
  }
  const std::vector<size_t> bins = fit_bins();
  const std::vector<double> c = slope_weights(bins);
  double slope = 0;
  for (size_t j = 0; j < bins.size(); ++j) slope += c[j] * std::log(power[bins[j]]);
  return slope;
}

// The slope spectral_slope estimates on pink noise, and its standard deviation, from the construction
// (pink_run). A block's bin k is X(k) = Σ_g α_g(k) z_g over the Gaussians z_g that touch the block, with
// α_g(k) = s Σ_{t in g's span} w_t e^(-2πikt/512) (w Hann). Rows r ≤ 8 change at block-relative 2^r·odd
// (2^(r+1) divides 512), so every block has the same spans: [0, 2^r), [2^r, 3·2^r), …, [512 − 2^r, 512), the
// first and last shared with the neighbouring blocks; rows r ≥ 9 change only at multiples of 512, constant
// over a block, where the periodic Hann window's transform vanishes for k ≥ 2 (all fitted bins). So over B
// blocks, with C = E[X(k) X̄(k')], D = E[X(k) X(k')] within a block and N, N', M, M' the same between a block
// and the next (through the shared runs), for jointly Gaussian X (Isserlis: Cov(|X|², |Y|²) = |E X Ȳ|² + |E X
// Y|²):
//   E P_k = B·C_kk,  Cov(P_k, P_k') = B(|C|² + |D|²) + (B − 1)(|N|² + |N'|² + |M|² + |M'|²).
// To second order (delta method; P is a sum of B = 256 terms), E ln P_k = ln E P_k − Var P_k / (2 (E P_k)²)
// and Cov(ln P_k, ln P_k') = Cov(P_k, P_k') / (E P_k E P_k'), so the slope's mean is Σ c_k E ln P_k and its
// variance Σ c_k c_k' Cov(ln P_k, ln P_k'). (The fp32 samples round at 2^-24 relative: far below.)
struct SlopeModel {
  double slope = 0, sd = 0;
};
SlopeModel pink_slope_model() {
  using cd = std::complex<double>;
  const std::vector<size_t> bins = fit_bins();
  const size_t m = bins.size();
  const double s = std::sqrt(kPinkVariance), blocks = static_cast<double>(kTotal / kBlock);
  // prefix[j][t] = Σ_{t' < t} w_t' e^(-2πi k_j t'/512): a span's α in O(1).
  std::vector<std::vector<cd>> prefix(m, std::vector<cd>(kBlock + 1));
  for (size_t j = 0; j < m; ++j)
    for (size_t t = 0; t < kBlock; ++t)
      prefix[j][t + 1] =
          prefix[j][t] +
          hann(t) * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(bins[j] * t) / kBlock);
  const auto alpha = [&](size_t j, size_t t0, size_t t1) { return s * (prefix[j][t1] - prefix[j][t0]); };
  std::vector<std::pair<size_t, size_t>> spans;   // every Gaussian's span within one block
  std::vector<std::pair<size_t, size_t>> shared;  // per row r ≤ 8: its first span and its last
  for (int r = 0; (size_t{2} << r) <= kBlock; ++r) {
    const size_t h = size_t{1} << r;
    spans.emplace_back(0, h);
    for (size_t b = h; b < kBlock; b += 2 * h) spans.emplace_back(b, std::min(b + 2 * h, kBlock));
    shared.emplace_back(0, kBlock - h);
  }
  for (size_t t = 0; t < kBlock; ++t) spans.emplace_back(t, t + 1);  // the fresh Gaussians
  std::vector<std::vector<cd>> a(m), first(m), last(m);
  for (size_t j = 0; j < m; ++j) {
    for (const auto& [t0, t1] : spans) a[j].push_back(alpha(j, t0, t1));
    for (int r = 0; static_cast<size_t>(r) < shared.size(); ++r) {
      const size_t h = size_t{1} << r;
      first[j].push_back(alpha(j, 0, h));
      last[j].push_back(alpha(j, kBlock - h, kBlock));
    }
  }
  const auto sum = [](const std::vector<cd>& x, const std::vector<cd>& y, bool conjugate) {
    cd v = 0;
    for (size_t g = 0; g < x.size(); ++g) v += x[g] * (conjugate ? std::conj(y[g]) : y[g]);
    return v;
  };
  std::vector<double> mean(m), cov(m * m);
  for (size_t j = 0; j < m; ++j) mean[j] = blocks * sum(a[j], a[j], true).real();
  for (size_t j = 0; j < m; ++j)
    for (size_t l = 0; l < m; ++l) {
      const double within = std::norm(sum(a[j], a[l], true)) + std::norm(sum(a[j], a[l], false));
      const double across =
          std::norm(sum(last[j], first[l], true)) + std::norm(sum(first[j], last[l], true)) +
          std::norm(sum(last[j], first[l], false)) + std::norm(sum(first[j], last[l], false));
      cov[j * m + l] = blocks * within + (blocks - 1) * across;
    }
  const std::vector<double> c = slope_weights(bins);
  SlopeModel out;
  double var = 0;
  for (size_t j = 0; j < m; ++j) {
    out.slope += c[j] * (std::log(mean[j]) - cov[j * m + j] / (2 * mean[j] * mean[j]));
    for (size_t l = 0; l < m; ++l) var += c[j] * c[l] * cov[j * m + l] / (mean[j] * mean[l]);
  }
  out.sd = std::sqrt(var);
  return out;
}

// White: a statistic, not rounding. Each bin's power is a mean over 256 blocks of an exponential variable,
// so ln(power) has standard deviation ≈ 1/√256; Hann-windowed neighbours are correlated (power correlation
// (2/3)² and (1/6)² at distances 1 and 2), which scales the variance of a weighted sum by at most the
// correlation matrix's largest eigenvalue, ≤ 1 + 2(4/9 + 1/36). The least-squares slope over the 127 bins
// has standard deviation ≤ (1/16)·√(that / Σ(ln f − mean)²) ≈ 8.9e-3; the tolerance is 5 of those.
// Pink: the slope the Voss–McCartney construction gives over these bins (−1.079) and its standard deviation
// (8.7e-3), from pink_slope_model; the tolerance is 5 of those. That the construction is 1/f is a property of
// its design (exact, no draw or rounding in it): its slope is checked to be −1 within a tenth, the design's
// own ripple over these bins.
TEST(Noise, WhiteIsFlatAndPinkFallsAsOneOverF) {
  double sxx = 0, sx = 0;
  int m = 0;
  for (size_t k : fit_bins()) {
    const double hz = 16000.0 * static_cast<double>(k) / kBlock;
    sx += std::log(hz), sxx += std::log(hz) * std::log(hz), ++m;
  }
  const double slope_sd = (1.0 / 16) * std::sqrt((1 + 2 * (4.0 / 9 + 1.0 / 36)) / (sxx - sx * sx / m));
  EXPECT_NEAR(spectral_slope(NoiseColor::White), 0.0, 5 * slope_sd);
  const SlopeModel pink = pink_slope_model();
  EXPECT_NEAR(pink.slope, -1.0, 0.1);
  EXPECT_NEAR(spectral_slope(NoiseColor::Pink), pink.slope, 5 * pink.sd) << "sd " << pink.sd;
  std::cout << "[ pink slope ] construction " << pink.slope << " (sd " << pink.sd << "), measured "
            << spectral_slope(NoiseColor::Pink) << "\n";
}

}  // namespace
}  // namespace gpstream::audio
