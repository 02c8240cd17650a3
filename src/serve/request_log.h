// The server's request log: one JSON object per line (connect, request, open, close, refused, ...), each
// with the time in ISO-8601 UTC first. Lines are built with nlohmann::json on the calling thread and queued;
// one writer thread writes them in order, whole, so lines never interleave and a slow or blocked destination
// (a full pipe on stderr, a slow disk) never holds up a network thread: past kMaxQueuedLogLines or
// kMaxQueuedLogBytes not yet written, lines are dropped and counted, and a "log_dropped" line says how
// many. The text of requests and streams is left out unless the log was opened with log_text. Write errors
// are ignored: a full disk must not stop the server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "util/error.h"

namespace gpstream::serve {

// Text kept for the log per request or stream with log_text (the rest is cut, and the line says so).
inline constexpr size_t kMaxLoggedTextBytes = 16 << 10;
// Lines, and bytes of them, queued or being written at most.
inline constexpr size_t kMaxQueuedLogLines = 4096;
inline constexpr size_t kMaxQueuedLogBytes = 8 << 20;

// "2026-12-06T04:15:00.123Z".
std::string iso8601_utc(std::chrono::system_clock::time_point t);

// JSON text of `j` on one line; invalid UTF-8 (a raw request path, say) is replaced, never thrown on.
std::string json_line(const nlohmann::ordered_json& j);

class RequestLog {
 public:
  // Appends to the file at `path` (created if missing).
  static Result<std::shared_ptr<RequestLog>> open_file(const std::string& path, bool log_text);
  // Writes to the process's stderr.
  static std::shared_ptr<RequestLog> to_stderr(bool log_text);
  // Writes the lines still queued, then closes the file.
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Whether lines may carry the text of requests and streams.
  bool log_text() const { return log_text_; }
  // Queues {"time": now, "event": event, ...fields} as one line.
  void write(std::string_view event, const nlohmann::ordered_json& fields);

 private:
  RequestLog(std::FILE* file, bool owned, bool log_text);
  void run_writer();

  std::FILE* file_;
  bool owned_;
  bool log_text_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;                 // lines with their newline
  size_t pending_lines_ = 0, pending_bytes_ = 0;  // queued or being written
  uint64_t dropped_ = 0;                          // lines dropped since the last log_dropped line
  bool closing_ = false;
  std::thread writer_;
};

// Appends `text` to `kept` up to kMaxLoggedTextBytes in all; returns false when some of it was cut.
bool keep_for_log(std::string& kept, std::string_view text);

}  // namespace gpstream::serve
