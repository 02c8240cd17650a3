// Real-input FFT of a power-of-two size (the log-mel front end uses 512): X[k] = sum_t x[t] e^(-2 pi i k t /
// n) for k = 0 .. n/2, without normalisation, in double precision. Implemented as one complex radix-2 FFT of
// size n/2 over the packed pairs (x[2m], x[2m+1]) followed by the usual split into even and odd halves.
// Twiddles are computed once per size. Not thread-safe per object (it owns its scratch buffer).
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace gpstream::audio {

class RealFft {
 public:
  // n: a power of two, at least 4 (anything else is a bug and aborts).
  explicit RealFft(size_t n);
  size_t size() const { return n_; }
  // in: n samples; out: n/2 + 1 bins.
  void forward(const double* in, std::complex<double>* out);

 private:
  size_t n_;
  std::vector<size_t> bit_reverse_;            // permutation for the n/2-point complex FFT
  std::vector<std::complex<double>> twiddle_;  // e^(-2 pi i j / (n/2)), j < n/4
  std::vector<std::complex<double>> split_;    // e^(-2 pi i k / n), k <= n/2
  std::vector<std::complex<double>> work_;     // n/2 complex values
};

}  // namespace gpstream::audio
