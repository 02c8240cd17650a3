// Frequency warp and SpecAugment masks on log-mel features (feature_augment.h).
#include "speech/feature_augment.h"

#include <algorithm>
#include <cmath>

#include "audio/log_mel.h"
#include "audio/mel_filterbank.h"
#include "util/splitmix64.h"

namespace gpstream::speech {

Status validate_feature_augment_options(const FeatureAugmentOptions& o) {
  if (!(o.warp_min >= 0.5 && o.warp_min <= o.warp_max && o.warp_max <= 2.0))
    return invalid_argument("feature augmentation: need 0.5 <= warp_min <= warp_max <= 2");
  if (o.freq_masks < 0 || o.freq_masks > 16 || o.time_masks < 0 || o.time_masks > 16)
    return invalid_argument("feature augmentation: mask counts must be in 0 .. 16");
  if (o.freq_mask_bins < 0 || o.freq_mask_bins > static_cast<int>(audio::kLogMelBins))
    return invalid_argument("feature augmentation: freq_mask_bins must be in 0 .. " +
                            std::to_string(audio::kLogMelBins));
  if (o.time_mask_frames < 0 || o.time_mask_frames > 1000)
    return invalid_argument("feature augmentation: time_mask_frames must be in 0 .. 1000");
  return {};
}

namespace {

// A mask of width uniform in 0 .. max_width (at most `extent`), placed uniformly where it fits in
// [0, extent).
FeatureMask draw_mask(SplitMix64& rng, size_t max_width, size_t extent) {
  const size_t width = static_cast<size_t>(rng.below(std::min(max_width, extent) + 1));
  const size_t begin = static_cast<size_t>(rng.below(extent - width + 1));
  return {begin, begin + width};
}

}  // namespace

FeatureAugmentDraw draw_feature_augment(const FeatureAugmentOptions& o, size_t n_frames, uint64_t seed) {
  SplitMix64 rng(seed);
  FeatureAugmentDraw d;
  d.warp = o.warp_min + (o.warp_max - o.warp_min) * rng.uniform();
  for (int i = 0; i < o.freq_masks; ++i)
    d.bands.push_back(draw_mask(rng, static_cast<size_t>(o.freq_mask_bins), audio::kLogMelBins));
  const size_t max_run = std::min(static_cast<size_t>(o.time_mask_frames), n_frames / 5);
  for (int i = 0; i < o.time_masks; ++i) d.runs.push_back(draw_mask(rng, max_run, n_frames));
  return d;
}

void warp_log_mel(std::span<float> frames, double alpha) {
  if (alpha == 1.0) return;
  const size_t n = audio::kLogMelBins;
  const double dmel = audio::hz_to_mel_slaney(audio::kLogMelMaxHz) / static_cast<double>(n + 1);
  // Where output bin m reads: bin lo[m] with weight 1 - frac[m], bin lo[m] + 1 with weight frac[m].
  std::vector<size_t> lo(n);
  std::vector<double> frac(n);
  for (size_t m = 0; m < n; ++m) {
    const double centre = audio::mel_to_hz_slaney(dmel * static_cast<double>(m + 1));
    const double x =
        std::clamp(audio::hz_to_mel_slaney(centre / alpha) / dmel - 1.0, 0.0, static_cast<double>(n - 1));
    lo[m] = std::min(static_cast<size_t>(x), n - 2);
    frac[m] = x - static_cast<double>(lo[m]);
  }
  std::vector<float> in(n);
  for (size_t f = 0; f + n <= frames.size(); f += n) {
    std::copy_n(frames.begin() + static_cast<std::ptrdiff_t>(f), n, in.begin());
    for (size_t m = 0; m < n; ++m)
      frames[f + m] = static_cast<float>((1.0 - frac[m]) * in[lo[m]] + frac[m] * in[lo[m] + 1]);
  }
}

void apply_feature_augment(const FeatureAugmentDraw& d, std::span<float> frames) {
  warp_log_mel(frames, d.warp);
  if ((d.bands.empty() && d.runs.empty()) || frames.empty()) return;
  double sum = 0;
  for (float v : frames) sum += v;
  const auto mean = static_cast<float>(sum / static_cast<double>(frames.size()));
  const size_t n = audio::kLogMelBins, n_frames = frames.size() / n;
  for (const FeatureMask& b : d.bands)
    for (size_t f = 0; f < n_frames; ++f)
      std::fill(frames.begin() + static_cast<std::ptrdiff_t>(f * n + b.begin),
                frames.begin() + static_cast<std::ptrdiff_t>(f * n + b.end), mean);
  for (const FeatureMask& r : d.runs)
    std::fill(frames.begin() + static_cast<std::ptrdiff_t>(r.begin * n),
              frames.begin() + static_cast<std::ptrdiff_t>(r.end * n), mean);
}

}  // namespace gpstream::speech
