// Training-time augmentation of log-mel features (log_mel.h), between the front end and the speech encoder,
// for an encoder that must understand voices it never heard. Two kinds, both drawn from one seed so an
// utterance's augmentation is reproducible (the trainer derives the seed from its seed, the epoch and the
// utterance, as for the noise):
//  - Frequency warp (vocal tract length perturbation, Jaitly & Hinton 2013): the spectrum is stretched by a
//    factor alpha drawn uniformly from [warp_min, warp_max], so a formant at f Hz moves to alpha f. Output
//    bin m takes the input at frequency c_m / alpha, where c_m is the centre of mel filter m
//    (mel_filterbank.h: the n_bins + 2 points equally spaced in Slaney mel over 0 .. kLogMelMaxHz; filter m
//    peaks at point m + 1). That frequency's position among the centres, x = mel(c_m / alpha) / dmel - 1, is
//    read by linear interpolation between bins floor(x) and floor(x) + 1; positions below 0 or above
//    n_bins - 1 take the edge bin.
//  - SpecAugment masks (Park et al. 2019): freq_masks bands of w consecutive bins, w uniform in
//    0 .. freq_mask_bins, and time_masks runs of t consecutive frames, t uniform in
//    0 .. min(time_mask_frames, n_frames / 5), each starting uniformly among the places where it fits; masked
//    values are set to the mean of all the utterance's (warped) features. The masks are drawn after the warp
//    factor, bands before runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "util/error.h"

namespace gpstream::speech {

struct FeatureAugmentOptions {
  double warp_min = 1.0, warp_max = 1.0;  // 1, 1: no warp
  int freq_masks = 0, freq_mask_bins = 0;
  int time_masks = 0, time_mask_frames = 0;
  bool enabled() const {
    return warp_min != 1.0 || warp_max != 1.0 || (freq_masks > 0 && freq_mask_bins > 0) ||
           (time_masks > 0 && time_mask_frames > 0);
  }
};

// InvalidArgument unless 0.5 <= warp_min <= warp_max <= 2, the mask counts are in 0 .. 16, freq_mask_bins in
// 0 .. kLogMelBins and time_mask_frames in 0 .. 1000.
Status validate_feature_augment_options(const FeatureAugmentOptions& options);

struct FeatureMask {
  size_t begin = 0, end = 0;  // [begin, end): bins or frames
};

// What apply_feature_augment does for one utterance.
struct FeatureAugmentDraw {
  double warp = 1.0;
  std::vector<FeatureMask> bands, runs;  // frequency bands (bins), time runs (frames)
};

// The draw for an utterance of n_frames frames of kLogMelBins bins. `options` must be valid.
FeatureAugmentDraw draw_feature_augment(const FeatureAugmentOptions& options, size_t n_frames, uint64_t seed);

// Warps then masks `frames` (row-major, kLogMelBins floats per frame) in place as `draw` says.
void apply_feature_augment(const FeatureAugmentDraw& draw, std::span<float> frames);

// The warp alone: every frame (kLogMelBins floats) stretched by alpha (> 0) as described above.
void warp_log_mel(std::span<float> frames, double alpha);

}  // namespace gpstream::speech
