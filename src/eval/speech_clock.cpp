#include "eval/speech_clock.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpstream::eval {

Result<SpeechSourceClock> SpeechSourceClock::create(double sample_rate, int64_t total_samples,
                                                    double segment_ms) {
  if (!(sample_rate > 0) || !std::isfinite(sample_rate) || sample_rate > 1e6)
    return invalid_argument("speech clock: sample rate must be in (0, 1e6] Hz");
  if (total_samples < 0) return invalid_argument("speech clock: negative number of samples");
  if (!(segment_ms > 0) || !std::isfinite(segment_ms))
    return invalid_argument("speech clock: the source segment must be a positive number of ms");
  const double step = std::ceil(segment_ms / 1000.0 * sample_rate);  // SimulEval: math.ceil(size / 1000 * sr)
  if (step < 1) return invalid_argument("speech clock: the source segment is shorter than one sample");
  if (step > 1e12)
    return invalid_argument("speech clock: source segment of " + std::to_string(segment_ms) +
                            " ms is too long");
  return SpeechSourceClock(sample_rate, total_samples, static_cast<int64_t>(step));
}

int64_t SpeechSourceClock::advance() {
  if (finished()) return 0;
  const int64_t n = std::min(step_, total_ - consumed_);
  consumed_ += n;
  return n;
}

}  // namespace gpstream::eval
