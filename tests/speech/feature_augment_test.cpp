// Feature augmentation: the frequency warp against a hand derivation (a ramp over bin index is warped
// exactly, since linear interpolation of a linear function is exact, to the warped position computed here
// from the Slaney mel formula written out separately), a formant peak moving up by the warp factor, the
// SpecAugment masks' bounds and fill value, seeding, and option validation.
#include "speech/feature_augment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../testing/fp_bounds.h"
#include "audio/log_mel.h"

namespace gpstream::speech {
namespace {

constexpr size_t kBins = audio::kLogMelBins;

// Slaney mel (linear below 1 kHz, logarithmic above), written out for the test.
double mel(double hz) {
  return hz < 1000 ? hz / (200.0 / 3) : 15 + std::log(hz / 1000) / (std::log(6.4) / 27);
}
double hz(double m) {
  return m < 15 ? m * (200.0 / 3) : 1000 * std::exp((m - 15) * std::log(6.4) / 27);
}

std::vector<float> ramp_frames(size_t n_frames) {
  std::vector<float> f(n_frames * kBins);
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i % kBins);
  return f;
}

TEST(FeatureAugment, WarpOfOneIsTheIdentity) {
  std::vector<float> f = ramp_frames(3), g = f;
  warp_log_mel(g, 1.0);
  EXPECT_EQ(f, g);
}

TEST(FeatureAugment, WarpMovesEachBinToTheHandDerivedPosition) {
  const double dmel = mel(8000) / (kBins + 1);
  for (double alpha : {0.85, 0.93, 1.07, 1.15}) {
    std::vector<float> f = ramp_frames(2);
    warp_log_mel(f, alpha);
    for (size_t m = 0; m < kBins; ++m) {
      const double centre = hz(dmel * static_cast<double>(m + 1));
      const double want = std::clamp(mel(centre / alpha) / dmel - 1, 0.0, kBins - 1.0);
      // On a ramp the interpolation gives the source position itself, ≤ kBins + 1: computed in double on
      // both sides (three Slaney conversions each, ~5 roundings apiece — log or exp, a division, a product,
      // a sum — amplified by their condition ≤ 2, and /dmel − 1: γ_64(u₆₄) relative for the two sides),
      // stored as fp32 (u|want|).
      EXPECT_NEAR(f[m], want,
                  gpstream::testing::kUnitF32 * std::fabs(want) +
                      gpstream::testing::gamma_n(64, gpstream::testing::kUnitF64) * (kBins + 1))
          << "alpha " << alpha << " bin " << m;
      EXPECT_EQ(f[kBins + m], f[m]);  // every frame alike
    }
  }
}

TEST(FeatureAugment, AFormantMovesUpByTheWarpFactor) {
  // A peak at bin 40 (centre c); after a warp by 1.1 the largest value sits at the bin whose centre is
  // nearest 1.1 c.
  const double dmel = mel(8000) / (kBins + 1);
  std::vector<float> f(kBins, 0.0f);
  f[40] = 10.0f;
  warp_log_mel(f, 1.1);
  const double target = 1.1 * hz(dmel * 41);
  size_t nearest = 0;
  for (size_t m = 0; m < kBins; ++m)
    if (std::abs(hz(dmel * (m + 1)) - target) < std::abs(hz(dmel * (nearest + 1)) - target)) nearest = m;
  EXPECT_GT(nearest, 40u);
  EXPECT_EQ(static_cast<size_t>(std::max_element(f.begin(), f.end()) - f.begin()), nearest);
}

TEST(FeatureAugment, MasksStayInBoundsAndFillWithTheMean) {
  FeatureAugmentOptions o;
  o.freq_masks = 2;
  o.freq_mask_bins = 12;
  o.time_masks = 3;
  o.time_mask_frames = 8;
  const size_t n_frames = 30;  // runs are capped at 30 / 5 = 6 frames
  size_t widest_band = 0, longest_run = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const FeatureAugmentDraw d = draw_feature_augment(o, n_frames, seed);
    EXPECT_EQ(d.warp, 1.0);
    ASSERT_EQ(d.bands.size(), 2u);
    ASSERT_EQ(d.runs.size(), 3u);
    for (const FeatureMask& b : d.bands) {
      ASSERT_LE(b.begin, b.end);
      ASSERT_LE(b.end, kBins);
      ASSERT_LE(b.end - b.begin, 12u);
      widest_band = std::max(widest_band, b.end - b.begin);
    }
    for (const FeatureMask& r : d.runs) {
      ASSERT_LE(r.begin, r.end);
      ASSERT_LE(r.end, n_frames);
      ASSERT_LE(r.end - r.begin, 6u);
      longest_run = std::max(longest_run, r.end - r.begin);
    }
  }
  EXPECT_EQ(widest_band, 12u);  // the bounds are reached
  EXPECT_EQ(longest_run, 6u);

  // Applied: masked cells hold the mean of all values, the others are untouched.
  std::vector<float> f(n_frames * kBins);
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  double sum = 0;
  for (float v : f) sum += v;
  const auto mean = static_cast<float>(sum / static_cast<double>(f.size()));
  const FeatureAugmentDraw d = draw_feature_augment(o, n_frames, 5);
  std::vector<float> g = f;
  apply_feature_augment(d, g);
  size_t masked = 0;
  for (size_t t = 0; t < n_frames; ++t)
    for (size_t m = 0; m < kBins; ++m) {
      bool in_mask = false;
      for (const FeatureMask& b : d.bands) in_mask |= m >= b.begin && m < b.end;
      for (const FeatureMask& r : d.runs) in_mask |= t >= r.begin && t < r.end;
      const size_t i = t * kBins + m;
      if (in_mask) {
        EXPECT_EQ(g[i], mean);
        ++masked;
      } else {
        EXPECT_EQ(g[i], f[i]);
      }
    }
  EXPECT_GT(masked, 0u);
}

TEST(FeatureAugment, TheSeedDecidesTheDraw) {
  FeatureAugmentOptions o;
  o.warp_min = 0.9;
  o.warp_max = 1.1;
  o.freq_masks = 1;
  o.freq_mask_bins = 10;
  const FeatureAugmentDraw a = draw_feature_augment(o, 100, 42), b = draw_feature_augment(o, 100, 42);
  EXPECT_EQ(a.warp, b.warp);
  EXPECT_EQ(a.bands[0].begin, b.bands[0].begin);
  double lo = 2, hi = 0;
  for (uint64_t s = 0; s < 100; ++s) {
    const double w = draw_feature_augment(o, 100, s).warp;
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  EXPECT_GE(lo, 0.9);
  EXPECT_LE(hi, 1.1);
  EXPECT_GT(hi - lo, 0.15);  // spread over the range
}

TEST(FeatureAugment, ValidationRejectsBadOptions) {
  FeatureAugmentOptions o;
  EXPECT_TRUE(validate_feature_augment_options(o).ok());
  EXPECT_FALSE(o.enabled());
  auto bad = [](FeatureAugmentOptions x) { return !validate_feature_augment_options(x).ok(); };
  o.warp_min = 1.1;
  EXPECT_TRUE(bad(o));  // min > max
  o = {};
  o.warp_min = 0.3;
  EXPECT_TRUE(bad(o));
  o = {};
  o.freq_mask_bins = 81;
  EXPECT_TRUE(bad(o));
  o = {};
  o.time_masks = -1;
  EXPECT_TRUE(bad(o));
  o = {};
  o.time_masks = 2;
  o.time_mask_frames = 10;
  EXPECT_TRUE(o.enabled());
  EXPECT_TRUE(validate_feature_augment_options(o).ok());
}

}  // namespace
}  // namespace gpstream::speech
