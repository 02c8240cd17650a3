// Log-mel extraction (definition in log_mel.h). Bitwise equality between chunkings holds by construction:
// every frame, streamed or not, is computed by the one compute_frame() from the same 400 samples, with no
// state carried from frame to frame, and log_mel() is itself a single push().
#include "audio/log_mel.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "audio/mel_filterbank.h"

namespace gpstream::audio {

size_t log_mel_frame_count(size_t n_samples) {
  return n_samples < kLogMelWindow ? 0 : (n_samples - kLogMelWindow) / kLogMelHop + 1;
}

LogMelStream::LogMelStream()
    : fft_(kLogMelFftSize),
      window_(kLogMelWindow),
      filterbank_(mel_filterbank_slaney(kLogMelBins, kLogMelFftSize, kLogMelSampleRate, 0.0, kLogMelMaxHz)),
      filter_begin_(kLogMelBins),
      filter_end_(kLogMelBins),
      frame_(kLogMelFftSize, 0.0),
      spectrum_(kLogMelFftSize / 2 + 1),
      power_(kLogMelFftSize / 2 + 1) {
  for (size_t t = 0; t < kLogMelWindow; ++t)
    window_[t] = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(t) / kLogMelWindow);
  const size_t n_bins = power_.size();
  for (size_t m = 0; m < kLogMelBins; ++m) {
    const double* row = filterbank_.data() + m * n_bins;
    size_t b = 0;
    while (b < n_bins && row[b] == 0.0) ++b;
    size_t e = n_bins;
    while (e > b && row[e - 1] == 0.0) --e;
    filter_begin_[m] = b;
    filter_end_[m] = e;
  }
}

void LogMelStream::compute_frame(const float* window_start, float* out) {
  for (size_t t = 0; t < kLogMelWindow; ++t) frame_[t] = static_cast<double>(window_start[t]) * window_[t];
  // frame_[kLogMelWindow ..] stays zero: the padding.
  fft_.forward(frame_.data(), spectrum_.data());
  for (size_t k = 0; k < power_.size(); ++k) power_[k] = std::norm(spectrum_[k]);
  const size_t n_bins = power_.size();
  for (size_t m = 0; m < kLogMelBins; ++m) {
    const double* row = filterbank_.data() + m * n_bins;
    double energy = 0.0;
    for (size_t k = filter_begin_[m]; k < filter_end_[m]; ++k) energy += row[k] * power_[k];
    out[m] = static_cast<float>(std::log(std::max(energy, kLogMelFloor)));
  }
}

size_t LogMelStream::push(const float* samples, size_t n, std::vector<float>& frames) {
  pending_.insert(pending_.end(), samples, samples + n);
  samples_pushed_ += n;
  size_t start = 0, made = 0;
  while (pending_.size() - start >= kLogMelWindow) {
    frames.resize(frames.size() + kLogMelBins);
    compute_frame(pending_.data() + start, frames.data() + frames.size() - kLogMelBins);
    start += kLogMelHop;
    ++made;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(start));
  frames_emitted_ += made;
  return made;
}

void LogMelStream::reset() {
  pending_.clear();
  samples_pushed_ = 0;
  frames_emitted_ = 0;
}

std::vector<float> log_mel(std::span<const float> samples) {
  LogMelStream stream;
  std::vector<float> frames;
  frames.reserve(log_mel_frame_count(samples.size()) * kLogMelBins);
  stream.push(samples.data(), samples.size(), frames);
  return frames;
}

}  // namespace gpstream::audio
