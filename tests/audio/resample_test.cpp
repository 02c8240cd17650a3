// Resampler: pure tones keep their frequency, phase and amplitude (oracle: the analytic sinusoid at the
// new rate), tones above the new Nyquist are removed, equal rates are an exact identity, and results are
// deterministic. Covers the tabulated phases (44.1 kHz, 8 kHz) and the per-sample path (a prime rate).
#include "audio/resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace gpstream::audio {
namespace {

std::vector<float> tone(double hz, double amplitude, uint32_t rate, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(amplitude * std::sin(2 * std::numbers::pi * hz * i / rate));
  return v;
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
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), 1e-3);
  EXPECT_NEAR(amplitude_at(*y, 1000, 16000, 100), 0.5, 1e-3);
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
  EXPECT_LT(peak, 1e-3);
}

TEST(Resample, Upsample8kTo16k) {
  auto y = resample(tone(1000, 0.5, 8000, 8000), 8000, 16000);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 16000u);
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), 1e-3);
}

TEST(Resample, PrimeRateUsesPerSamplePhases) {
  // L = 16000 phases of ~2100 taps: too large to tabulate, computed per output sample.
  const uint32_t rate = 999983;
  auto y = resample(tone(1000, 0.5, rate, rate / 20), rate, 16000);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 800u);
  EXPECT_LT(max_tone_error(*y, 1000, 0.5, 16000, 100), 1e-3);
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

}  // namespace
}  // namespace gpstream::audio
