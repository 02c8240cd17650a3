// Real FFT via a half-size complex FFT. With z[m] = x[2m] + i x[2m+1] and Z its n/2-point DFT, the even and
// odd sample spectra are E[k] = (Z[k] + conj Z[n/2-k]) / 2 and O[k] = (Z[k] - conj Z[n/2-k]) / 2i, and
// X[k] = E[k] + e^(-2 pi i k / n) O[k] for k = 0 .. n/2 (Z is n/2-periodic, so Z[n/2] = Z[0]).
#include "audio/fft.h"

#include <cmath>
#include <numbers>

#include "util/error.h"

namespace gpstream::audio {
namespace {

using Complex = std::complex<double>;

// Plain (a+bi)(c+di): std::complex's operator* adds NaN/inf recovery we do not need in the inner loop.
inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

}  // namespace

RealFft::RealFft(size_t n) : n_(n) {
  GPS_ASSERT(n >= 4 && (n & (n - 1)) == 0, "RealFft size must be a power of two >= 4");
  const size_t half = n / 2;
  size_t bits = 0;
  while ((size_t{1} << bits) < half) ++bits;
  bit_reverse_.resize(half);
  for (size_t i = 0; i < half; ++i) {
    size_t r = 0;
    for (size_t b = 0; b < bits; ++b)
      if (i & (size_t{1} << b)) r |= size_t{1} << (bits - 1 - b);
    bit_reverse_[i] = r;
  }
  twiddle_.resize(half / 2);
  for (size_t j = 0; j < half / 2; ++j) {
    const double a = -2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(half);
    twiddle_[j] = {std::cos(a), std::sin(a)};
  }
  split_.resize(half + 1);
  for (size_t k = 0; k <= half; ++k) {
    const double a = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    split_[k] = {std::cos(a), std::sin(a)};
  }
  work_.resize(half);
}

void RealFft::forward(const double* in, Complex* out) {
  const size_t half = n_ / 2;
  for (size_t m = 0; m < half; ++m) work_[bit_reverse_[m]] = {in[2 * m], in[2 * m + 1]};
  // Iterative radix-2 decimation in time over the bit-reversed input.
  for (size_t len = 2; len <= half; len *= 2) {
    const size_t step = half / len;
    for (size_t start = 0; start < half; start += len) {
      for (size_t j = 0; j < len / 2; ++j) {
        const Complex t = mul(twiddle_[j * step], work_[start + j + len / 2]);
        const Complex u = work_[start + j];
        work_[start + j] = u + t;
        work_[start + j + len / 2] = u - t;
      }
    }
  }
  for (size_t k = 0; k <= half; ++k) {
    const Complex a = work_[k % half];
    const Complex b = std::conj(work_[(half - k) % half]);
    const Complex even = 0.5 * (a + b);
    const Complex diff = 0.5 * (a - b);
    const Complex odd = {diff.imag(), -diff.real()};  // diff / i
    out[k] = even + mul(split_[k], odd);
  }
}

}  // namespace gpstream::audio
