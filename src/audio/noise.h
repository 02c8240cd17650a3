// Seeded additive noise for speech training: white or pink noise mixed into an utterance at a signal-to-noise
// ratio drawn uniformly (in dB) from a configured range. Applied when an utterance is loaded, with a seed
// derived from (base seed, epoch, utterance), so every epoch hears different noise without storing copies,
// and the same (seed, epoch, utterance) always gives the same bits.
// Definitions (docs/speech.md):
//   SNR_dB = 10 log10(P_signal / P_noise), P = mean of squares over the whole utterance (silences included)
//   white: independent standard Gaussian samples
//   pink : Voss-McCartney: kPinkNoiseRows Gaussian rows, row r redrawn every 2^r samples (at the
//          samples whose index has r trailing zero bits), plus a fresh Gaussian each sample; power ~ 1/f
//          from about rate / 2^(rows+1) up to rate / 2
// The noise is scaled so that the SNR of the mix is the drawn value exactly (up to float rounding of the
// sum), measured on the noise actually generated. Samples are not clipped. A silent utterance (P_signal = 0)
// is left unchanged, since no SNR is defined for it.
#pragma once

#include <cstdint>
#include <span>

#include "util/error.h"

namespace gpstream::audio {

enum class NoiseColor { White, Pink };

inline constexpr int kPinkNoiseRows = 16;

struct NoiseOptions {
  double snr_min_db = 10.0;  // SNR drawn uniformly in [snr_min_db, snr_max_db]
  double snr_max_db = 30.0;
  double pink_fraction = 0.5;   // probability of pink rather than white noise
  double clean_fraction = 0.0;  // probability of adding no noise at all
};

// InvalidArgument unless both SNR bounds are finite and within [-30, 100] dB, min <= max, and both
// fractions are in [0, 1].
Status validate_noise_options(const NoiseOptions& options);

// What add_noise does for one seed.
struct NoiseDraw {
  bool clean = false;  // no noise (drawn clean, or silent input)
  NoiseColor color = NoiseColor::White;
  double snr_db = 0.0;
};

// The seed for one utterance in one epoch: a 64-bit mix of the three values (splitmix64 finaliser).
uint64_t noise_seed(uint64_t base_seed, uint64_t epoch, uint64_t utterance_key);
// A stable 64-bit key for an utterance name (FNV-1a of its bytes), e.g. of the manifest's wav path.
uint64_t noise_utterance_key(std::span<const char> name);

// The draw (clean?, colour, SNR) for `seed`, without touching any audio. `options` must be valid.
NoiseDraw draw_noise(const NoiseOptions& options, uint64_t seed);

// Fills `out` with unit-variance noise of the given colour, determined by `seed` (pink is normalised by
// sqrt(rows + 1), so its variance is 1 as well).
void generate_noise(NoiseColor color, uint64_t seed, std::span<float> out);

// Mixes noise into `samples` in place as draw_noise(options, seed) says, and returns that draw (clean is
// also set for silent input). InvalidArgument if `options` is invalid.
Result<NoiseDraw> add_noise(std::span<float> samples, const NoiseOptions& options, uint64_t seed);

}  // namespace gpstream::audio
