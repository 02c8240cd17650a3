// SimulEval's clock for speech input (evaluator/instance.py SpeechInputInstance, metrics.md A.1): the
// source audio is pushed in segments of ceil(segment_ms / 1000 × sample_rate) samples (the last one
// shorter), a target word written after k samples were pushed gets the delay k × 1000 / sample_rate
// ms (audio consumed), its computation-aware `elapsed` adds the wall-clock ms since the first push,
// and the source length is the whole audio in ms. An evaluator that streams audio into a model keeps
// one SpeechSourceClock per utterance and records words with TextOutputRecorder (instance_log.h).
#pragma once

#include <cstdint>

#include "util/error.h"

namespace gpstream::eval {

class SpeechSourceClock {
 public:
  // total_samples of audio at sample_rate Hz, pushed segment_ms at a time (SimulEval
  // --source-segment-size; it must be >= 1 ms there, here > 0).
  static Result<SpeechSourceClock> create(double sample_rate, int64_t total_samples, double segment_ms);

  // Samples per pushed segment: ceil(segment_ms / 1000 × sample_rate), in SimulEval's float order.
  int64_t samples_per_segment() const { return step_; }
  // Pushes the next segment; returns its number of samples (0 once the audio is exhausted).
  int64_t advance();
  bool finished() const { return consumed_ >= total_; }
  int64_t samples_consumed() const { return consumed_; }
  // The delay of a word written now: ms of audio consumed (SimulEval step_to_delay).
  double delay_ms() const { return samples_to_ms(consumed_); }
  // Its computation-aware timestamp: delay + wall-clock ms since the first push (step_to_elapsed).
  double elapsed_ms(double wall_ms_since_start) const { return delay_ms() + wall_ms_since_start; }
  // |X| for speech: the whole audio in ms (SimulEval source_length).
  double source_length_ms() const { return samples_to_ms(total_); }
  double samples_to_ms(int64_t samples) const { return static_cast<double>(samples) * 1000.0 / rate_; }

 private:
  SpeechSourceClock(double rate, int64_t total, int64_t step) : rate_(rate), total_(total), step_(step) {}
  double rate_;
  int64_t total_;
  int64_t step_;
  int64_t consumed_ = 0;
};

}  // namespace gpstream::eval
