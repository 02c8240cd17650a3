// Prometheus text exposition of the server metrics.
#include "serve/metrics.h"

#include <charconv>
#include <cmath>

namespace gpstream::serve {
namespace {

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip: "0.005", not "0.0050000000000000001"
  (void)ec;
  return std::string(buf, end);
}

void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
         number(value) + "\n";
}

}  // namespace

void Histogram::observe(double seconds) {
  if (!std::isfinite(seconds)) return;
  std::lock_guard lock(mu_);
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  ++buckets_[i];
  sum_ += seconds;
  ++count_;
}

uint64_t Histogram::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::string Histogram::render(const std::string& name) const {
  std::lock_guard lock(mu_);
  std::string out;
  uint64_t cum = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cum += buckets_[i];
    out += name + "_bucket{le=\"" + number(kBounds[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += buckets_.back();
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
  return out;
}

double Histogram::quantile(double q) const {
  std::lock_guard lock(mu_);
  if (count_ == 0) return 0;
  const double rank = q * static_cast<double>(count_);
  uint64_t cum = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const uint64_t before = cum;
    cum += buckets_[i];
    if (static_cast<double>(cum) >= rank && buckets_[i] > 0) {
      if (i == kBounds.size()) return kBounds.back();  // +Inf bucket: the highest finite bound
      const double lo = i == 0 ? 0.0 : kBounds[i - 1], hi = kBounds[i];
      return lo + (hi - lo) * (rank - static_cast<double>(before)) / static_cast<double>(buckets_[i]);
    }
  }
  return kBounds.back();
}

std::string Metrics::render() const {
  std::string out;
  metric(out, "gpstream_sessions_active", "gauge",
         "Streams open now (WebSocket, translate requests, SimulEval).",
         static_cast<double>(sessions_active.load()));
  metric(out, "gpstream_sessions_total", "counter", "Streams opened since start.",
         static_cast<double>(sessions_total.load()));
  metric(out, "gpstream_sessions_rejected_total", "counter",
         "Streams refused because max sessions were open or their caches would not fit the memory budget.",
         static_cast<double>(sessions_rejected.load()));
  metric(out, "gpstream_session_errors_total", "counter", "Streams ended by an error.",
         static_cast<double>(session_errors.load()));
  metric(out, "gpstream_source_words_total", "counter", "Source words received.",
         static_cast<double>(source_words.load()));
  metric(out, "gpstream_audio_chunks_total", "counter",
         "Audio source units (speech encoder chunks) received.", static_cast<double>(audio_chunks.load()));
  metric(out, "gpstream_audio_seconds_total", "counter", "Audio received, in seconds.",
         audio_ms.load() / 1000.0);
  metric(out, "gpstream_target_words_total", "counter", "Target words emitted.",
         static_cast<double>(target_words.load()));
  metric(out, "gpstream_forwarded_tokens_total", "counter", "Token rows forwarded through the model.",
         static_cast<double>(forwarded_tokens.load()));
  metric(out, "gpstream_forwards_total", "counter", "Batched forward passes.",
         static_cast<double>(forwards.load()));
  metric(out, "gpstream_tokens_per_second", "gauge", "Forwarded token rows per second (recent window).",
         tokens_per_second.load());
  metric(out, "gpstream_queue_depth", "gauge", "Client commands waiting for the engine thread.",
         static_cast<double>(queue_depth.load()));
  metric(out, "gpstream_backlog_words", "gauge", "Source words received but not yet consumed, all streams.",
         static_cast<double>(backlog_words.load()));
  metric(out, "gpstream_http_requests_total", "counter", "HTTP requests served.",
         static_cast<double>(http_requests.load()));
  metric(out, "gpstream_http_errors_total", "counter", "HTTP replies with a 4xx or 5xx status.",
         static_cast<double>(http_errors.load()));
  metric(out, "gpstream_ws_protocol_errors_total", "counter",
         "Bad WebSocket messages (malformed, binary, too big).",
         static_cast<double>(ws_protocol_errors.load()));
  metric(out, "gpstream_connections_open", "gauge", "TCP connections being served.",
         static_cast<double>(connections_open.load()));
  metric(out, "gpstream_connections_refused_total", "counter",
         "Connections answered 503 and closed (connection limit reached, or draining).",
         static_cast<double>(connections_refused.load()));
  metric(out, "gpstream_accept_pauses_total", "counter",
         "Pauses of the listener after accept() ran out of descriptors or memory.",
         static_cast<double>(accept_pauses.load()));
  out +=
      "# HELP gpstream_word_lag_seconds Per target word: emission time minus arrival of the last source word "
      "it read.\n"
      "# TYPE gpstream_word_lag_seconds histogram\n";
  out += word_lag.render("gpstream_word_lag_seconds");
  return out;
}

}  // namespace gpstream::serve
