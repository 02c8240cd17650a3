// Slaney mel filterbank (definition in mel_filterbank.h).
#include "audio/mel_filterbank.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace gpstream::audio {
namespace {

constexpr double kLinearHzPerMel = 200.0 / 3.0;
constexpr double kLogStartHz = 1000.0;
constexpr double kLogStartMel = kLogStartHz / kLinearHzPerMel;  // 15
const double kLogStep = std::log(6.4) / 27.0;                   // mel steps per ln(Hz) above 1 kHz

}  // namespace

double hz_to_mel_slaney(double hz) {
  if (hz < kLogStartHz) return hz / kLinearHzPerMel;
  return kLogStartMel + std::log(hz / kLogStartHz) / kLogStep;
}

double mel_to_hz_slaney(double mel) {
  if (mel < kLogStartMel) return mel * kLinearHzPerMel;
  return kLogStartHz * std::exp(kLogStep * (mel - kLogStartMel));
}

std::vector<double> mel_filterbank_slaney(size_t n_mels, size_t n_fft, double sample_rate, double f_min,
                                          double f_max) {
  GPS_ASSERT(n_mels > 0 && n_fft >= 2 && f_min >= 0.0 && f_max > f_min, "mel filterbank: bad arguments");
  const size_t n_bins = n_fft / 2 + 1;
  const double mel_lo = hz_to_mel_slaney(f_min);
  const double mel_hi = hz_to_mel_slaney(f_max);
  std::vector<double> edge_hz(n_mels + 2);
  for (size_t i = 0; i < n_mels + 2; ++i)
    edge_hz[i] = mel_to_hz_slaney(mel_lo + (mel_hi - mel_lo) * static_cast<double>(i) /
                                               static_cast<double>(n_mels + 1));

  std::vector<double> weights(n_mels * n_bins, 0.0);
  for (size_t m = 0; m < n_mels; ++m) {
    const double lo = edge_hz[m], centre = edge_hz[m + 1], hi = edge_hz[m + 2];
    const double area_norm = 2.0 / (hi - lo);
    bool any = false;
    for (size_t k = 0; k < n_bins; ++k) {
      const double f = static_cast<double>(k) * sample_rate / static_cast<double>(n_fft);
      const double rising = (f - lo) / (centre - lo);
      const double falling = (hi - f) / (hi - centre);
      const double w = std::max(0.0, std::min(rising, falling));
      weights[m * n_bins + k] = w * area_norm;
      any = any || w > 0.0;
    }
    GPS_ASSERT(any, "mel filterbank: a filter covers no FFT bin (too many mels for this FFT size)");
  }
  return weights;
}

}  // namespace gpstream::audio
