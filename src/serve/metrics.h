// Server metrics, rendered in the Prometheus text exposition format (version 0.0.4) for GET /metrics:
// counters and gauges as atomics, one fixed-bucket histogram of per-word lag. Thread-safe; no I/O.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace gpstream::serve {

// A cumulative histogram with fixed upper bounds (seconds), as Prometheus histograms are exposed.
class Histogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1,  0.25,
                                                     0.5,   1.0,  2.5,   5.0,  10.0, 30.0};
  void observe(double seconds);
  // Exposition lines for metric `name` (bucket, sum, count).
  std::string render(const std::string& name) const;
  uint64_t count() const;
  // The value below which a fraction q of observations lie, interpolated within its bucket (as
  // Prometheus' histogram_quantile); 0 without observations.
  double quantile(double q) const;

 private:
  mutable std::mutex mu_;
  std::array<uint64_t, kBounds.size() + 1> buckets_{};  // last: +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct Metrics {
  std::atomic<int64_t> sessions_active{0};
  std::atomic<int64_t> sessions_total{0};
  std::atomic<int64_t> sessions_rejected{0};  // max sessions reached, or the memory budget
  std::atomic<int64_t> session_errors{0};     // streams ended by an error (client or engine)
  std::atomic<int64_t> source_words{0};
  std::atomic<int64_t> target_words{0};
  std::atomic<int64_t> audio_chunks{0};      // audio source units (encoder chunks) received
  std::atomic<double> audio_ms{0};           // audio they cover
  std::atomic<int64_t> forwarded_tokens{0};  // source + target rows through the model
  std::atomic<int64_t> forwards{0};          // batched forward passes (Scheduler rounds with work)
  std::atomic<int64_t> queue_depth{0};       // engine commands waiting to be applied
  std::atomic<int64_t> backlog_words{0};     // source words received but not yet consumed, all sessions
  std::atomic<double> tokens_per_second{0};  // forwarded tokens/s over the last few seconds
  std::atomic<int64_t> http_requests{0};
  std::atomic<int64_t> http_errors{0};          // 4xx/5xx replies
  std::atomic<int64_t> ws_protocol_errors{0};   // malformed client messages, binary frames, too big
  std::atomic<int64_t> connections_open{0};     // TCP connections being served (connection_limit.h)
  std::atomic<int64_t> connections_refused{0};  // answered 503 (over the limit, or draining)
  std::atomic<int64_t> accept_pauses{0};        // accept() waits after running out of descriptors
  Histogram word_lag;                           // per target word: emission − arrival of its last source

  std::string render() const;
};

}  // namespace gpstream::serve
