// Sample-rate conversion for the speech front end (any rate -> 16 kHz, or any rate pair): a rational
// polyphase resampler with a Kaiser-windowed sinc low-pass. Deterministic: the same input gives the same
// bits on every run (no threads, no randomness, coefficients computed in double in a fixed order).
// Definition, with L/M = to_rate/from_rate reduced by their gcd:
//   cutoff  fc = kResampleRolloff * 0.5 * min(1, to_rate / from_rate)        (cycles per input sample)
//   kernel  h(t) = 2 fc sinc(2 fc t) * kaiser(t / W, beta = kResampleKaiserBeta),  |t| <= W,
//           W = kResampleZeroCrossings / (2 fc) input samples (that many sinc zero crossings per side)
//   output  y[n] = sum_k x[k] h(n M / L - k) / sum_k h(n M / L - k)   (each phase's taps sum to 1: unit DC
//   gain)
// Input outside [0, n) counts as zero; the output has ceil(n L / M) samples and y[0] is aligned with x[0].
// Equal rates return the input unchanged (exact identity).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/error.h"

namespace gpstream::audio {

inline constexpr double kResampleRolloff = 0.94;
inline constexpr double kResampleKaiserBeta = 8.6;
inline constexpr int kResampleZeroCrossings = 16;
// The largest rate the resampler accepts (the readers bound files and streams more tightly: audio/wav.h).
inline constexpr uint32_t kResampleMaxRate = 1'000'000;
// The most samples one call writes: 2^31 (37 hours at 16 kHz, 8 GiB of floats). The output size follows
// from the input's length and the rate ratio, which can be 10^6 (1 Hz to 1 MHz), so it is checked, with
// the tap table, before anything is allocated.
inline constexpr uint64_t kResampleMaxOutputSamples = uint64_t{1} << 31;

// Converts `samples` from `from_rate` to `to_rate` Hz. InvalidArgument for a zero rate or rates above
// kResampleMaxRate; OutOfRange, before any allocation, for an output of more than kResampleMaxOutputSamples
// or one that with its tap table exceeds the memory budget (util/memory_budget.h).
Result<std::vector<float>> resample(std::span<const float> samples, uint32_t from_rate, uint32_t to_rate);

}  // namespace gpstream::audio
