// Log-mel features for streaming speech recognition: 80 bins every 10 ms from 16 kHz mono audio, computed
// incrementally as audio arrives. Exact definition (docs/speech.md; scripts/make-audio-fixtures is an
// independent numpy implementation of it):
//   frame i covers samples [160 i, 160 i + 400)  (25 ms window, 10 ms hop, no centre padding: causal)
//   x_i[t] = s[160 i + t] * w[t],  w[t] = 0.5 - 0.5 cos(2 pi t / 400)  (periodic Hann), t < 400;
//            zero-padded to 512 samples; samples as given (no scaling, dither, pre-emphasis or mean removal)
//   P_i[k] = |FFT_512(x_i)[k]|^2, k = 0 .. 256                          (power spectrum)
//   M_i[m] = sum_k F[m][k] P_i[k], m < 80; F = Slaney mel filterbank, 0 .. 8000 Hz (mel_filterbank.h)
//   out_i[m] = ln(max(M_i[m], 1e-10))                                   (natural log, floored)
// Everything is computed in double and rounded to float once at the end. A stream of n samples has
// floor((n - 400) / 160) + 1 frames (0 if n < 400); a trailing partial window is never emitted.
// Not here: Whisper's global log10 max-clamp and rescale (not causal); resampling (resample.h).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "audio/fft.h"

namespace gpstream::audio {

inline constexpr size_t kLogMelSampleRate = 16000;
inline constexpr size_t kLogMelWindow = 400;  // samples (25 ms)
inline constexpr size_t kLogMelHop = 160;     // samples (10 ms)
inline constexpr size_t kLogMelFftSize = 512;
inline constexpr size_t kLogMelBins = 80;
inline constexpr double kLogMelFloor = 1e-10;
inline constexpr double kLogMelMaxHz = 8000.0;

// Frames produced by n samples.
size_t log_mel_frame_count(size_t n_samples);

// Incremental extractor. push() may be called with any chunk sizes; the frames it produces are bitwise
// identical to log_mel() over the concatenated audio (whole-file extraction is one push()).
class LogMelStream {
 public:
  LogMelStream();
  // Appends each frame completed by these samples to `frames` (kLogMelBins floats per frame, row-major)
  // and returns how many frames were appended.
  size_t push(const float* samples, size_t n, std::vector<float>& frames);
  size_t samples_pushed() const { return samples_pushed_; }
  size_t frames_emitted() const { return frames_emitted_; }
  // Forgets all audio (a new utterance); the filterbank and FFT tables are kept.
  void reset();

 private:
  void compute_frame(const float* window_start, float* out);

  RealFft fft_;
  std::vector<double> window_;                     // periodic Hann, kLogMelWindow
  std::vector<double> filterbank_;                 // kLogMelBins x (kLogMelFftSize / 2 + 1)
  std::vector<size_t> filter_begin_, filter_end_;  // non-zero bin range of each filter
  std::vector<double> frame_;                      // kLogMelFftSize, zero-padded
  std::vector<std::complex<double>> spectrum_;
  std::vector<double> power_;
  std::vector<float> pending_;  // samples from the start of the next frame on
  size_t samples_pushed_ = 0;
  size_t frames_emitted_ = 0;
};

// Whole-signal extraction: log_mel_frame_count(samples.size()) rows of kLogMelBins floats.
std::vector<float> log_mel(std::span<const float> samples);

}  // namespace gpstream::audio
