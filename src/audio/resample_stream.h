// Streaming sample-rate conversion: samples arrive in pieces of any size and come out exactly (bit for bit)
// as resample() (resample.h) would produce them for the whole signal. An output sample is emitted once every
// input its kernel reaches has arrived (half a kernel width of look-ahead: about 1 ms at common rates);
// finish() emits the rest, treating the input past the end as zero, as resample() does. How: resample() over
// a segment that starts at input sample s gives outputs aligned with s, so when s is a multiple of M (L/M =
// to_rate/from_rate in lowest terms) they are the whole signal's outputs n + s L / M with the same phases and
// taps. The stream keeps the input from such an s on (a kernel width of history) and resamples that segment
// on each push.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/error.h"

namespace gpstream::audio {

class ResampleStream {
 public:
  // Rates as for resample() (positive, at most 1 MHz).
  static Result<ResampleStream> create(uint32_t from_rate, uint32_t to_rate);

  // Appends the output samples these input samples complete; returns how many.
  size_t push(std::span<const float> samples, std::vector<float>& out);
  // End of the input: appends the remaining outputs (the total is then ceil(n_in · L / M), as resample()).
  size_t finish(std::vector<float>& out);

  uint64_t samples_in() const { return n_in_; }
  uint64_t samples_out() const { return n_out_; }

 private:
  ResampleStream(uint32_t from_rate, uint32_t to_rate, uint64_t up, uint64_t down, int64_t reach);
  size_t emit(uint64_t n_end, std::vector<float>& out);

  uint32_t from_rate_ = 0, to_rate_ = 0;
  uint64_t up_ = 1, down_ = 1;  // L, M
  int64_t reach_ = 0;           // inputs beyond the output time that an output sample reads (floor(W) + 1)
  std::vector<float> history_;  // input samples [start_, n_in_)
  uint64_t start_ = 0;          // a multiple of down_
  uint64_t n_in_ = 0, n_out_ = 0;
  bool finished_ = false;
};

}  // namespace gpstream::audio
