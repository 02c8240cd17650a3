// Resampler: pure tones keep their frequency, phase and amplitude (oracle: the analytic sinusoid at the
// new rate), tones above the new Nyquist are removed, equal rates are an exact identity, and results are
// deterministic. Covers the tabulated phases (44.1 kHz, 8 kHz) and the per-sample path (a prime rate).
#include "audio/resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "../testing/scoped_env.h"

namespace gpstream::audio {
namespace {

std::vector<float> tone(double hz, double amplitude, uint32_t rate, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(amplitude * std::sin(2 * std::numbers::pi * hz * i / rate));
  return v;
}

// Filter accuracy (not rounding): a Kaiser window with β = kResampleKaiserBeta = 8.6 gives stopband
// attenuation and passband ripple A = β/0.1102 + 8.7 ≈ 86.7 dB (Kaiser's design formula, Oppenheim & Schafer
// §7.6: β = 0.1102(A − 8.7) for A > 50), δ = 10^(−A/20) ≈ 4.6e-5 in amplitude. The transition band,
// (A − 8)/(2.285·2W) rad per input sample for the kernel's 2W = 16/fc taps, is ≈ 2.6 kHz wide at 44.1 kHz and
// ≈ 1.3 kHz at 8 kHz, so 1 kHz tones lie in every case's passband and 12 kHz (from 44.1 kHz) or the 7 kHz
// image (8 → 16 kHz) in the stopband. A passband tone is off by ≤ δ·A from the ripple and ≤ δ·A more from
// each phase's taps being scaled to sum to 1 (a phase's DC gain itself within δ of 1); a stopband tone
// keeps ≤ 2δ·A likewise. fp32 adds the input tone's rounding u·A through Σ|h| ≤ 2 (a windowed sinc's taps,
// normalized) and the output's u·A: 3u·A.
double tone_bound(double amplitude) {
  const double atten_db = kResampleKaiserBeta / 0.1102 + 8.7, delta = std::pow(10.0, -atten_db / 20.0);
  return amplitude * (2 * delta + 3 * 0x1p-24);
}

// Max |y[n] - A sin(2 pi f n / rate)| over n in [skip, size - skip): the edges see the zero padding.
double max_tone_error(const std::vector<float>& y, double hz, double amplitude, uint32_t rate, size_t skip) {
  double worst = 0.0;
  for (size_t n = skip; n + skip < y.size(); ++n)
    worst = std::max(worst, std::abs(y[n] - amplitude * std::sin(2 * std::numbers::pi * hz * n / rate)));
  return worst;
}

// Amplitude of the component at `hz` by correlation with sin and cos, over [skip, size - skip).
double amplitude_at(const std::vector<float>& y, double hz, uint32_t rate, size_t skip) {
  double s = 0, c = 0;
  size_t count = 0;
  for (size_t n = skip; n + skip < y.size(); ++n, ++count) {
    s += y[n] * std::sin(2 * std::numbers::pi * hz * n / rate);
    c += y[n] * std::cos(2 * std::numbers::pi * hz * n / rate);
  }
  return 2.0 * std::sqrt(s * s + c * c) / count;
}

TEST(Resample, EqualRatesAreTheIdentity) {
  const auto x = tone(440, 0.3, 16000, 1000);
  auto y = resample(x, 16000, 16000);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(*y, x);
}

TEST(Resample, Tone44k1To16kKeepsFrequencyPhaseAndAmplitude) {
  const auto x = tone(1000, 0.5, 44100, 44100);
  auto y = resample(x, 44100, 16000);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 16000u);
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), tone_bound(0.5));
  // The correlation's estimate is (2/N)|Σ y_n e^{−iωn}|: for y = A sin(ωn + φ) exactly A, as the other
  // image's sum |sin(Nω)/sin ω| vanishes here (N = 15800, ω = 2π/16: Nω = 1975π); y's error e_n moves it by
  // ≤ (2/N)Σ|e_n| ≤ 2·max|e_n| (plus double rounding, ~N·u₆₄).
  EXPECT_NEAR(amplitude_at(*y, 1000, 16000, 100), 0.5, 2 * tone_bound(0.5));
  // The comparison is sensitive to frequency: a 1 Hz error drifts by a full cycle over the second.
  EXPECT_GT(max_tone_error(*y, 1001, 0.5, 16000, 100), 0.4);
}

TEST(Resample, RemovesToneAboveNewNyquist) {
  const auto x = tone(12000, 0.5, 44100, 44100);  // would alias to 4 kHz
  auto y = resample(x, 44100, 16000);
  ASSERT_TRUE(y.ok());
  double peak = 0.0;
  for (size_t n = 100; n + 100 < y->size(); ++n)
    peak = std::max(peak, static_cast<double>(std::abs((*y)[n])));
  EXPECT_LT(peak, tone_bound(0.5));
}

TEST(Resample, Upsample8kTo16k) {
  auto y = resample(tone(1000, 0.5, 8000, 8000), 8000, 16000);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 16000u);
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), tone_bound(0.5));
}

TEST(Resample, PrimeRateUsesPerSamplePhases) {
  // L = 16000 phases of ~2100 taps: too large to tabulate, computed per output sample.
  const uint32_t rate = 999983;
  auto y = resample(tone(1000, 0.5, rate, rate / 20), rate, 16000);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 800u);
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), tone_bound(0.5));
}

TEST(Resample, Deterministic) {
  const auto x = tone(3000, 0.5, 22050, 5000);
  auto a = resample(x, 22050, 16000);
  auto b = resample(x, 22050, 16000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->size(), (5000u * 320 + 440) / 441);
}

TEST(Resample, EmptyInput) {
  auto y = resample(std::vector<float>{}, 44100, 16000);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(y->empty());
}

TEST(Resample, RejectsBadRates) {
  EXPECT_FALSE(resample(std::vector<float>(10), 0, 16000).ok());
  EXPECT_FALSE(resample(std::vector<float>(10), 16000, 0).ok());
  auto r = resample(std::vector<float>(10), 2'000'000, 16000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}

// A tiny rate upsampled to 16 kHz writes thousands of samples per input sample: the output is checked against
// the memory budget before it is allocated (1,000 samples at 1 Hz would be 64 MB of output), and against
// kResampleMaxOutputSamples whatever the budget.
TEST(Resample, OutputIsCheckedAgainstTheMemoryBudgetBeforeAllocating) {
  const std::vector<float> x(1000, 0.25f);
  {
    gpstream::testing::ScopedEnv limit("GPSTREAM_MEMORY_LIMIT", "16M");
    auto r = resample(x, 1, 16000);
    ASSERT_FALSE(r.ok()) << r->size() << " samples written";
    EXPECT_EQ(r.error().code(), ErrorCode::OutOfRange);
    EXPECT_NE(r.error().message().find("resampling 1000 samples from 1 Hz to 16000 Hz"), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("GPSTREAM_MEMORY_LIMIT"), std::string::npos) << r.error().message();
    // What fits is resampled as before.
    auto small = resample(std::vector<float>(10, 0.25f), 1, 16000);
    ASSERT_TRUE(small.ok()) << small.error().message();
    EXPECT_EQ(small->size(), 160000u);
  }
  gpstream::testing::ScopedEnv off("GPSTREAM_MEMORY_LIMIT", "off");
  // 2^16 samples from 1 Hz to 1 MHz: 6.6e10 output samples, past the bound even with no budget.
  auto huge = resample(std::vector<float>(uint64_t{1} << 16), 1, kResampleMaxRate);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), ErrorCode::OutOfRange);
  EXPECT_NE(huge.error().message().find("65536 samples from 1 Hz to 1000000 Hz"), std::string::npos)
      << huge.error().message();
  EXPECT_NE(huge.error().message().find(std::to_string(kResampleMaxOutputSamples)), std::string::npos)
      << huge.error().message();
}

}  // namespace
}  // namespace gpstream::audio
