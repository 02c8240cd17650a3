// Mel filterbank on the bins of a real FFT, Slaney style (the librosa default, htk=False, norm="slaney"; also
// what Whisper's front end uses): the mel scale is linear below 1 kHz (mel = f / (200/3)) and logarithmic
// above (mel = 15 + ln(f / 1000) / (ln 6.4 / 27)). n_mels + 2 points equally spaced in mel from f_min to
// f_max are mapped back to Hz: f_0 < f_1 < ... < f_(n_mels+1). Filter m is the triangle rising from f_m to
// f_(m+1) and falling to f_(m+2), evaluated at the bin frequencies k * sample_rate / n_fft, and scaled by 2 /
// (f_(m+2) - f_m) so every filter has roughly unit area (Slaney normalisation).
#pragma once

#include <cstddef>
#include <vector>

namespace gpstream::audio {

double hz_to_mel_slaney(double hz);
double mel_to_hz_slaney(double mel);

// Row-major weights, n_mels rows of n_fft / 2 + 1 columns. Arguments are the library's own constants;
// a filter with no non-zero weight (too many mels for the FFT size) is a bug and aborts.
std::vector<double> mel_filterbank_slaney(size_t n_mels, size_t n_fft, double sample_rate, double f_min,
                                          double f_max);

}  // namespace gpstream::audio
