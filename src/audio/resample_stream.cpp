// ResampleStream: resample() over a sliding segment of the input (definition in resample_stream.h).
#include "audio/resample_stream.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "audio/resample.h"

namespace gpstream::audio {

Result<ResampleStream> ResampleStream::create(uint32_t from_rate, uint32_t to_rate) {
  // resample() validates the rates; an empty call checks them the same way.
  GPS_TRY(resample({}, from_rate, to_rate));
  const uint64_t g = std::gcd(from_rate, to_rate);
  const double cutoff = kResampleRolloff * 0.5 * std::min(1.0, static_cast<double>(to_rate) / from_rate);
  // resample() reads inputs k with k - floor(n M / L) in [-floor(W), floor(W) + 1].
  const auto reach = static_cast<int64_t>(std::floor(kResampleZeroCrossings / (2.0 * cutoff)));
  return ResampleStream(from_rate, to_rate, to_rate / g, from_rate / g, reach + 1);
}

ResampleStream::ResampleStream(uint32_t from_rate, uint32_t to_rate, uint64_t up, uint64_t down,
                               int64_t reach)
    : from_rate_(from_rate), to_rate_(to_rate), up_(up), down_(down), reach_(reach) {}

size_t ResampleStream::emit(uint64_t n_end, std::vector<float>& out) {
  if (n_end <= n_out_) return 0;
  // Outputs of the segment [start_, n_in_) are the whole signal's outputs from start_ · L / M on.
  auto seg = resample(history_, from_rate_, to_rate_);
  const uint64_t first = start_ / down_ * up_;
  const size_t before = out.size();
  for (uint64_t n = n_out_; n < n_end; ++n) out.push_back((*seg)[n - first]);
  n_out_ = n_end;
  // Keep the inputs that the next output reads: from floor(n_out_ M / L) - reach_, rounded down to a multiple
  // of M.
  const auto lowest = static_cast<int64_t>(n_out_ * down_ / up_) - reach_;
  const uint64_t keep_from = lowest <= 0 ? 0 : static_cast<uint64_t>(lowest) / down_ * down_;
  if (keep_from > start_) {
    history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(keep_from - start_));
    start_ = keep_from;
  }
  return out.size() - before;
}

size_t ResampleStream::push(std::span<const float> samples, std::vector<float>& out) {
  if (finished_ || samples.empty()) return 0;
  if (from_rate_ == to_rate_) {  // resample() is the identity
    out.insert(out.end(), samples.begin(), samples.end());
    n_in_ += samples.size();
    n_out_ += samples.size();
    return samples.size();
  }
  history_.insert(history_.end(), samples.begin(), samples.end());
  n_in_ += samples.size();
  // Output n is final once floor(n M / L) + reach_ < n_in_, i.e. n M < (n_in_ - reach_) L.
  if (n_in_ <= static_cast<uint64_t>(reach_)) return 0;
  const uint64_t limit = (n_in_ - static_cast<uint64_t>(reach_)) * up_;  // n M < limit
  const uint64_t n_end = (limit + down_ - 1) / down_;
  return emit(n_end, out);
}

size_t ResampleStream::finish(std::vector<float>& out) {
  if (finished_) return 0;
  finished_ = true;
  if (from_rate_ == to_rate_) return 0;
  return emit((n_in_ * up_ + down_ - 1) / down_, out);
}

}  // namespace gpstream::audio
