// The request log (request_log.h).
#include "serve/request_log.h"

#include <ctime>

namespace gpstream::serve {

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string json_line(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<std::shared_ptr<RequestLog>> RequestLog::open_file(const std::string& path, bool log_text) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return io_error("cannot open the log file " + path + " for appending");
  return std::shared_ptr<RequestLog>(new RequestLog(f, /*owned=*/true, log_text));
}

std::shared_ptr<RequestLog> RequestLog::to_stderr(bool log_text) {
  return std::shared_ptr<RequestLog>(new RequestLog(stderr, /*owned=*/false, log_text));
}

RequestLog::RequestLog(std::FILE* file, bool owned, bool log_text)
    : file_(file), owned_(owned), log_text_(log_text), writer_([this] { run_writer(); }) {}

RequestLog::~RequestLog() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_one();
  writer_.join();
  if (owned_) std::fclose(file_);
}

void RequestLog::write(std::string_view event, const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json line;
  line["time"] = iso8601_utc(std::chrono::system_clock::now());
  line["event"] = std::string(event);
  for (const auto& [key, value] : fields.items()) line[key] = value;
  std::string text = json_line(line);
  text.push_back('\n');
  {
    std::lock_guard lock(mu_);
    if (pending_lines_ + 1 > kMaxQueuedLogLines || pending_bytes_ + text.size() > kMaxQueuedLogBytes) {
      ++dropped_;
      return;
    }
    ++pending_lines_;
    pending_bytes_ += text.size();
    queue_.push_back(std::move(text));
  }
  cv_.notify_one();
}

void RequestLog::run_writer() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return closing_ || !queue_.empty() || dropped_ > 0; });
    if (queue_.empty() && dropped_ == 0) return;  // closing, and everything written
    std::deque<std::string> lines;
    lines.swap(queue_);
    const uint64_t dropped = dropped_;
    dropped_ = 0;
    lock.unlock();
    for (const std::string& text : lines) std::fwrite(text.data(), 1, text.size(), file_);
    if (dropped > 0) {
      const nlohmann::ordered_json note = {{"time", iso8601_utc(std::chrono::system_clock::now())},
                                           {"event", "log_dropped"},
                                           {"lines", dropped}};
      const std::string text = json_line(note) + "\n";
      std::fwrite(text.data(), 1, text.size(), file_);
    }
    std::fflush(file_);
    lock.lock();
    pending_lines_ -= lines.size();
    for (const std::string& text : lines) pending_bytes_ -= text.size();
  }
}

bool keep_for_log(std::string& kept, std::string_view text) {
  const size_t room = kept.size() < kMaxLoggedTextBytes ? kMaxLoggedTextBytes - kept.size() : 0;
  kept.append(text.substr(0, room));
  return text.size() <= room;
}

}  // namespace gpstream::serve
