// Server load test (docs/performance.md), loopback only and bounded in time: N concurrent WebSocket streams,
// each a speaker sending W source words per second for T seconds (continuous English text, sentence after
// sentence), then the end of the source. Reports per-word latency — client side: from sending the
// last source word a target word needed to receiving it; server side: the events' lag_ms — as p50/p99,
// the error count, and how long the streams took to finish after the speakers stopped. --sweep runs
// N = 1, 2, 4, ... up to --streams and reports the largest N the server sustains in real time (no
// errors, p99 latency under --realtime-ms, finishing within --realtime-ms of the speakers).
//   bench_serve [-m MODEL] [--streams 64] [--wps 3] [--seconds 60] [-t THREADS] [--sweep] [--json]
//               [--connect PORT]   (load a server that is already running instead of starting one)
// --soak text|speech: a hostile-client soak against a `gpstream serve` child process (docs/performance.md,
// "Hostile-client soak"): the good streams run twice, first alone, then beside attackers from 127.0.0.2,
// each time against a fresh server; reports errors, timeouts, word lag p50/p99 and the server's peak RSS
// (VmHWM) of both runs, and PASS/FAIL (exit 0/1) for 0 errors and timeouts, p99 within 2x and peak RSS within
// +100 MB.
//   bench_serve --soak text|speech [--seconds 60] [--streams 64|16] [-m MODEL] [-t THREADS]
//               [--gpstream PATH (default: gpstream beside bench_serve)] [--attacks all|post,malformed,...]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav.h"
#include "kernels/blas_kernels.h"
#include "serve/server.h"
#include "stream/session.h"

using namespace gpstream;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* kText[] = {
    "The meeting will start at nine o'clock tomorrow morning.",
    "Please bring your notes and the report from last week.",
    "We will discuss the new project and the budget for next year.",
    "The weather has been very cold in the north of the country.",
    "Many people are waiting for the train at the station.",
    "She said that the children would arrive before dinner.",
    "Our company has opened a new office in the city centre.",
    "Can you tell me where the nearest hospital is?",
};

struct Stats {
  std::vector<double> client_ms, server_ms;
  int64_t source_words = 0, target_words = 0, errors = 0, finished = 0, started = 0;
  double last_finish_ms = 0;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

// How a speaker connects and what it sends: text words (the default) or audio, in real time or, with
// `fast`, as fast as the server takes it.
struct SpeakerConfig {
  std::string target = "/v1/stream";            // with ?key=KEY when the server has API keys
  std::string bind;                             // local address to connect from (empty: any)
  const std::vector<int16_t>* audio = nullptr;  // s16le samples, looped; null: text
  int sample_rate = 16000;
  bool fast = false;  // audio: send `fast_seconds` of it as fast as the writes complete
  double fast_seconds = 120;
  bool one_pass = false;      // real-time audio: one pass of the recording, then the end (an utterance)
  double start_delay_ms = 0;  // wait this long before connecting
  std::function<void()> on_finished;
};

// One speaker: sends a word every 1000/W ms until `stop_at`, then the end of the source, and reads
// events all along. Runs on the shared io_context thread.
class Speaker : public std::enable_shared_from_this<Speaker> {
 public:
  using Config = SpeakerConfig;

  Speaker(net::io_context& ioc, int id, double wps, double stop_at, Stats& stats, Config cfg = {})
      : ws_(ioc),
        timer_(ws_.get_executor()),
        id_(id),
        period_ms_(1000.0 / wps),
        stop_at_(stop_at),
        stats_(stats),
        cfg_(std::move(cfg)) {
    for (size_t s = 0; s < std::size(kText); ++s)
      for (const auto& w : tokenizer_words(kText[(s + static_cast<size_t>(id)) % std::size(kText)]))
        words_.push_back(w);
    sent_.emplace_back();
    if (cfg_.audio) {
      period_ms_ = 100;  // real-time audio: 100 ms of samples every 100 ms
      // Streams start at different places of the recording (one-pass streams at its start).
      if (!cfg_.one_pass) audio_pos_ = (static_cast<size_t>(id) * 7919) % cfg_.audio->size();
    }
  }

  void start(const tcp::endpoint& ep) {
    if (cfg_.start_delay_ms > 0) {
      timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(cfg_.start_delay_ms)));
      cfg_.start_delay_ms = 0;
      timer_.async_wait([self = shared_from_this(), ep](beast::error_code ec) {
        if (!ec) self->start(ep);
      });
      return;
    }
    auto& sock = beast::get_lowest_layer(ws_).socket();
    if (!cfg_.bind.empty()) {
      beast::error_code ec;
      sock.open(tcp::v4(), ec);
      if (!ec) sock.bind(tcp::endpoint(net::ip::make_address(cfg_.bind), 0), ec);
      if (ec) return error("bind", ec.message());
    }
    beast::get_lowest_layer(ws_).async_connect(ep, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->error("connect", ec.message());
      self->ws_.async_handshake("127.0.0.1", self->cfg_.target, [self](beast::error_code ec2) {
        if (ec2) return self->error("handshake", ec2.message());
        if (self->cfg_.audio)
          self->send(R"({"type": "start", "audio_format": "s16le", "sample_rate": )" +
                     std::to_string(self->cfg_.sample_rate) + "}");
        else
          self->send(R"({"type": "start", "continuous": true})");
        self->t0_ = now_ms();
        if (self->cfg_.fast)
          self->pump();
        else
          self->tick();
        self->read();
      });
    });
  }

 private:
  static std::vector<std::string> tokenizer_words(const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(' ', i);
      if (j == std::string::npos) j = s.size();
      if (j > i) out.push_back(s.substr(i, j - i));
      i = j + 1;
    }
    return out;
  }

  // The next `seconds` of audio as one binary frame of s16le samples.
  std::string audio_frame(double seconds) {
    const auto& a = *cfg_.audio;
    const size_t n = static_cast<size_t>(seconds * cfg_.sample_rate);
    std::string frame(n * 2, '\0');
    for (size_t i = 0; i < n; ++i) {
      const auto v = static_cast<uint16_t>(a[audio_pos_]);
      frame[2 * i] = static_cast<char>(v & 0xff);
      frame[2 * i + 1] = static_cast<char>(v >> 8);
      audio_pos_ = (audio_pos_ + 1) % a.size();
    }
    audio_sent_ += n;
    return frame;
  }

  // Fast audio: keeps one 0.5 s frame in flight until `fast_seconds` of audio are sent, then the end.
  void pump() {
    if (done_ || ended_) return;
    if (fast_sent_s_ >= cfg_.fast_seconds) {
      ended_ = true;
      send(R"({"type": "end"})");
      return;
    }
    fast_sent_s_ += 0.5;
    send(audio_frame(0.5), true);
  }

  void tick() {
    const double now = now_ms();
    if (cfg_.one_pass ? audio_sent_ >= cfg_.audio->size() : now >= stop_at_) {
      ended_ = true;
      send(R"({"type": "end"})");
      return;
    }
    if (cfg_.audio) {
      ++next_;
      send(audio_frame(period_ms_ / 1000), true);
      ++stats_.source_words;  // audio: frames sent
      schedule_tick();
      return;
    }
    const std::string& w = words_[next_ % words_.size()];
    ++next_;
    sent_.back().push_back(now);
    send(nlohmann::json{{"type", "source"}, {"text", w + " "}}.dump());
    ++stats_.source_words;
    if (stream::ends_sentence(w)) sent_.emplace_back();
    schedule_tick();
  }

  void schedule_tick() {
    timer_.expires_at(
        std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double, std::milli>(t0_ + next_ * period_ms_))));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && !self->done_) self->tick();
    });
  }

  void read() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        if (!self->done_) self->error("read", ec.message());
        return;
      }
      self->on_message(beast::buffers_to_string(self->buf_.data()));
      self->buf_.consume(self->buf_.size());
      self->read();
    });
  }

  void on_message(const std::string& text) {
    const double now = now_ms();
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return error("protocol", "bad JSON from the server");
    const std::string type = j.value("type", "");
    if (type == "word") {
      const size_t seg = j["segment"].get<size_t>() - segment_base_;
      const int delay = j["delay"].get<int>();
      ++stats_.target_words;
      stats_.server_ms.push_back(j["lag_ms"].get<double>());
      if (cfg_.audio) return;  // audio: the server's lag_ms is the word lag
      if (seg < sent_.size() && delay >= 1 && static_cast<size_t>(delay) <= sent_[seg].size())
        stats_.client_ms.push_back(now - sent_[seg][delay - 1]);
    } else if (type == "segment_end") {
      if (!sent_.empty()) sent_.pop_front();
      if (sent_.empty()) sent_.emplace_back();
      ++segment_base_;
    } else if (type == "finished") {
      done_ = true;
      ++stats_.finished;
      stats_.last_finish_ms = std::max(stats_.last_finish_ms, now);
      if (cfg_.on_finished) cfg_.on_finished();
    } else if (type == "error") {
      error(j.value("code", ""), j.value("message", ""));
    }
  }

  void send(std::string frame, bool binary = false) {
    queue_.emplace_back(std::move(frame), binary);
    if (queue_.size() == 1) write();
  }

  void write() {
    ws_.binary(queue_.front().second);
    auto done = [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->error("write", ec.message());
      self->queue_.pop_front();
      if (!self->queue_.empty())
        self->write();
      else if (self->cfg_.fast)
        self->pump();
    };
    ws_.async_write(net::buffer(queue_.front().first), std::move(done));
  }

  void error(const std::string& what, const std::string& detail) {
    if (done_) return;
    done_ = true;
    ++stats_.errors;
    std::fprintf(stderr, "bench_serve: stream %d: %s: %s\n", id_, what.c_str(), detail.c_str());
    timer_.cancel();
  }

  websocket::stream<beast::tcp_stream> ws_;
  net::steady_timer timer_;
  beast::flat_buffer buf_;
  std::deque<std::pair<std::string, bool>> queue_;  // frame, binary
  int id_;
  double period_ms_, stop_at_, t0_ = 0;
  std::vector<std::string> words_;
  size_t next_ = 0;
  std::deque<std::vector<double>> sent_;  // per unfinished sentence: send time of each word
  size_t segment_base_ = 0;
  bool done_ = false, ended_ = false;
  Stats& stats_;
  Config cfg_;
  size_t audio_pos_ = 0, audio_sent_ = 0;
  double fast_sent_s_ = 0;
};

struct RunResult {
  int streams;
  Stats stats;
  double drain_ms;
  bool realtime;
};

RunResult run_load(int port, int n, double wps, double seconds, double realtime_ms) {
  net::io_context ioc;
  Stats stats;
  const double stop_at = now_ms() + seconds * 1000;
  const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  for (int i = 0; i < n; ++i) std::make_shared<Speaker>(ioc, i, wps, stop_at, stats)->start(ep);
  // Bounded: the speakers stop at T; the streams get T/2 + 10 s more to finish.
  ioc.run_for(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1500 + 10000)));
  RunResult r{n, std::move(stats), 0, false};
  r.drain_ms = r.stats.finished == n ? std::max(0.0, r.stats.last_finish_ms - stop_at) : -1;
  r.stats.errors += n - r.stats.finished - r.stats.errors;  // streams that never finished count as errors
  r.realtime = r.stats.errors == 0 && r.drain_ms >= 0 && r.drain_ms <= realtime_ms &&
               quantile(r.stats.client_ms, 0.99) <= realtime_ms;
  return r;
}

void print(const RunResult& r, double wps, double seconds, bool json) {
  const auto& s = r.stats;
  if (json) {
    std::printf(
        "{\"streams\": %d, \"wps\": %g, \"seconds\": %g, \"source_words\": %lld, \"target_words\": %lld, "
        "\"errors\": %lld, \"p50_ms\": %.1f, \"p99_ms\": %.1f, \"server_p50_ms\": %.1f, \"server_p99_ms\": "
        "%.1f, "
        "\"drain_ms\": %.1f, \"realtime\": %s}\n",
        r.streams, wps, seconds, static_cast<long long>(s.source_words),
        static_cast<long long>(s.target_words), static_cast<long long>(s.errors), quantile(s.client_ms, 0.5),
        quantile(s.client_ms, 0.99), quantile(s.server_ms, 0.5), quantile(s.server_ms, 0.99), r.drain_ms,
        r.realtime ? "true" : "false");
  } else {
    std::printf("%7d %5g %6g %9lld %9lld %6lld %9.1f %9.1f %9.1f %9.1f %9.1f %s\n", r.streams, wps, seconds,
                static_cast<long long>(s.source_words), static_cast<long long>(s.target_words),
                static_cast<long long>(s.errors), quantile(s.client_ms, 0.5), quantile(s.client_ms, 0.99),
                quantile(s.server_ms, 0.5), quantile(s.server_ms, 0.99), r.drain_ms,
                r.realtime ? "yes" : "no");
  }
  std::fflush(stdout);
}

// ---- Hostile-client soak (--soak text|speech) ------------------------------------------------------------
// The server runs as a `gpstream serve` child process (its RSS is its own, its descriptor limit can be set
// before exec); the good streams connect from 127.0.0.1, the attackers from 127.0.0.2 (Linux routes 127/8 to
// lo), so the server's per-address bookkeeping tells them apart.

struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
  int stdout_fd = -1;  // kept open until the server stops, so that a late write of its does not get SIGPIPE
};

std::optional<ServerProcess> start_server_process(const std::vector<std::string>& args, rlim_t nofile,
                                                  const std::string& log_path) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    if (nofile) {
      const rlimit rl{nofile, nofile};
      if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(126);
    }
    const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (dup2(out[1], STDOUT_FILENO) < 0 || log < 0 || dup2(log, STDERR_FILENO) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  // serve prints its port on stdout once the model is loaded and it listens.
  std::string line;
  const double deadline = now_ms() + 300000;
  while (now_ms() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char c;
    if (read(out[0], &c, 1) != 1 || c == '\n') break;
    line += c;
  }
  ServerProcess s{pid, std::atoi(line.c_str()), out[0]};
  if (s.port <= 0) {
    std::fprintf(stderr, "bench_serve: the server did not start (log: %s)\n", log_path.c_str());
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(out[0]);
    return std::nullopt;
  }
  return s;
}

// SIGTERM (serve drains), a second one after 15 s (stops at once), SIGKILL after 5 s more.
void stop_server_process(ServerProcess& s) {
  const int signals[] = {SIGTERM, SIGTERM, SIGKILL};
  const double waits_ms[] = {15000, 5000, 5000};
  for (int i = 0; i < 3 && s.pid > 0; ++i) {
    kill(s.pid, signals[i]);
    for (const double until = now_ms() + waits_ms[i]; now_ms() < until;) {
      if (waitpid(s.pid, nullptr, WNOHANG) == s.pid) {
        s.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  close(s.stdout_fd);
}

// A field of /proc/PID/status in kB (VmHWM: peak resident set; VmRSS: now), -1 if absent.
long proc_status_kb(pid_t pid, const char* field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  const std::string prefix = std::string(field) + ":";
  for (std::string line; std::getline(f, line);)
    if (line.rfind(prefix, 0) == 0) return std::atol(line.c_str() + prefix.size());
  return -1;
}

// Raw POSIX sockets for the attackers: each call has its own timeout, and the bytes sent are exactly the
// ones written here (malformed ones included).
int raw_connect(const char* from, int port, int timeout_s) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // bounds connect() too
  sockaddr_in local{}, remote{};
  local.sin_family = remote.sin_family = AF_INET;
  inet_pton(AF_INET, from, &local.sin_addr);
  inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  remote.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the end of the HTTP response's headers (or EOF, a timeout, 64 KiB); returns its status code
// (0: none) and leaves what came after the headers in `rest`.
int read_http_status(int fd, std::string& rest) {
  std::string buf;
  char chunk[4096];
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos && buf.size() < 65536) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  if (end == std::string::npos) return 0;
  rest = buf.substr(end + 4);
  return buf.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(buf.c_str() + 9) : 0;
}

// A client WebSocket frame (masked, as RFC 6455 requires of clients): opcode 1 text, 2 binary.
std::string ws_frame(int opcode, const std::string& payload) {
  std::string f(1, static_cast<char>(0x80 | opcode));
  const size_t n = payload.size();
  if (n < 126) {
    f += static_cast<char>(0x80 | n);
  } else {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>((n >> 8) & 0xff);
    f += static_cast<char>(n & 0xff);
  }
  const char mask[4] = {0x12, 0x34, 0x56, 0x78};
  f.append(mask, 4);
  for (size_t i = 0; i < n; ++i) f += static_cast<char>(payload[i] ^ mask[i % 4]);
  return f;
}

std::string upgrade_request(int port, const std::string& extra_headers) {
  return "GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
         "Sec-WebSocket-Version: 13\r\n" +
         extra_headers + "\r\n";
}

struct AttackReport {
  std::atomic<int> malformed_sent{0}, malformed_error_event{0}, malformed_closed{0}, malformed_refused{0};
  std::atomic<int> origin_403{0}, origin_other{0}, nokey_401{0}, nokey_other{0};
  int idle_connected = 0, idle_failed = 0, idle_answered = 0, idle_closed = 0, idle_open = 0;
  int post_status = 0;
  double post_ms = 0;
};

// One malformed message on its own keyed WebSocket stream: the server should answer with an error event and
// close the stream. Reads the server's frames until its close frame (or EOF, or 10 s).
void malformed_message(int port, const std::string& key, int i, AttackReport& rep) {
  const int fd = raw_connect("127.0.0.2", port, 10);
  if (fd < 0) {
    ++rep.malformed_refused;
    return;
  }
  std::string rest;
  if (!send_all(fd, upgrade_request(port, "Authorization: Bearer " + key + "\r\n")) ||
      read_http_status(fd, rest) != 101) {
    ++rep.malformed_refused;
    close(fd);
    return;
  }
  static const char* kBad[] = {
      "not json",
      "[1, 2, 3]",
      R"({"type": "bogus"})",
      R"({"type": "source", "text": "before start"})",
      R"({"type": "start", "k": "three"})",
      R"({"type": "start", "unknown_field": 1})",
      "\"just a string\"",
      nullptr,  // nesting past the 32 levels allowed
      nullptr,  // a binary frame
  };
  const size_t kind = static_cast<size_t>(i) % std::size(kBad);
  std::string frame;
  if (kind == 7)
    frame = ws_frame(1, std::string(40, '[') + std::string(40, ']'));
  else if (kind == 8)
    frame = ws_frame(2, std::string("\x00\x01\x02\x03", 4));
  else
    frame = ws_frame(1, kBad[kind]);
  if (send_all(fd, frame)) ++rep.malformed_sent;
  // Server frames are unmasked: [FIN|opcode][len][ext len][payload].
  std::string buf = rest;
  char chunk[4096];
  bool error_event = false, closed = false;
  for (;;) {
    while (buf.size() >= 2) {
      const int opcode = buf[0] & 0x0f;
      size_t len = static_cast<unsigned char>(buf[1]) & 0x7f, hdr = 2;
      if (len == 126) {
        if (buf.size() < 4) break;
        len =
            static_cast<size_t>(static_cast<unsigned char>(buf[2])) << 8 | static_cast<unsigned char>(buf[3]);
        hdr = 4;
      } else if (len == 127) {
        closed = true;  // no event is that long: give up on the stream
        break;
      }
      if (buf.size() < hdr + len) break;
      const std::string payload = buf.substr(hdr, len);
      buf.erase(0, hdr + len);
      if (opcode == 1 && payload.find("\"error\"") != std::string::npos) error_event = true;
      if (opcode == 8) closed = true;
    }
    if (closed) break;
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  if (error_event) ++rep.malformed_error_event;
  if (closed) ++rep.malformed_closed;
  close(fd);
}

// A handshake refused before the upgrade: returns the HTTP status.
int refused_handshake(int port, const std::string& headers) {
  const int fd = raw_connect("127.0.0.2", port, 10);
  if (fd < 0) return 0;
  std::string rest;
  const int status = send_all(fd, upgrade_request(port, headers)) ? read_http_status(fd, rest) : 0;
  close(fd);
  return status;
}

// A 30 KB POST /v1/translate: 4 lines of ~1,500 words each.
void big_translate(int port, const std::string& key, int timeout_s, AttackReport& rep) {
  std::string text;
  for (int line = 0; line < 4; ++line) {
    int words = 0;
    for (size_t s = 0; words < 1500; ++s) {
      std::string sentence = kText[(s + static_cast<size_t>(line)) % std::size(kText)];
      sentence.pop_back();  // one sentence per line: no sentence ends inside it
      text += sentence + ", ";
      words += static_cast<int>(std::count(sentence.begin(), sentence.end(), ' ')) + 1;
    }
    text += line < 3 ? "\n" : "";
  }
  const std::string body = nlohmann::json{{"text", text}}.dump();
  const double t0 = now_ms();
  const int fd = raw_connect("127.0.0.2", port, timeout_s);
  if (fd < 0) return;
  std::string rest;
  if (send_all(fd, "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                       "\r\nAuthorization: Bearer " + key +
                       "\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body))
    rep.post_status = read_http_status(fd, rest);
  rep.post_ms = now_ms() - t0;
  close(fd);
}

// The text attack, from 127.0.0.2: the big translate request (in the background), 1,000 malformed messages
// (8 at a time), 100 foreign-Origin and 100 keyless handshakes, then 1,100 idle TCP connections held until
// `hold_until` (the end of the good streams). `which`: "all" or a comma-separated subset of post, malformed,
// origin, nokey, idle (to tell which attack costs what).
void text_attacks(int port, const std::string& key, double hold_until, int timeout_s,
                  const std::string& which, AttackReport& rep) {
  auto on = [&](const char* name) {
    return which == "all" || ("," + which + ",").find("," + std::string(name) + ",") != std::string::npos;
  };
  std::thread post;
  if (on("post")) post = std::thread([&] { big_translate(port, key, timeout_s, rep); });
  std::vector<std::thread> workers;
  std::atomic<int> next{0};
  for (int w = 0; w < (on("malformed") ? 8 : 0); ++w)
    workers.emplace_back([&] {
      for (int i; (i = next++) < 1000;) malformed_message(port, key, i, rep);
    });
  for (auto& t : workers) t.join();
  for (int i = 0; i < (on("origin") ? 100 : 0); ++i) {
    const int s =
        refused_handshake(port, "Authorization: Bearer " + key + "\r\nOrigin: http://evil.example\r\n");
    ++(s == 403 ? rep.origin_403 : rep.origin_other);
  }
  for (int i = 0; i < (on("nokey") ? 100 : 0); ++i)
    ++(refused_handshake(port, "") == 401 ? rep.nokey_401 : rep.nokey_other);
  std::vector<int> idle;
  for (int i = 0; i < (on("idle") ? 1100 : 0); ++i) {
    const int fd = raw_connect("127.0.0.2", port, 5);
    if (fd < 0)
      ++rep.idle_failed;
    else
      idle.push_back(fd);
  }
  rep.idle_connected = static_cast<int>(idle.size());
  while (now_ms() < hold_until) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (const int fd : idle) {
    char c;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n > 0)
      ++rep.idle_answered;  // the 503 over_capacity answer
    else if (n == 0)
      ++rep.idle_closed;
    else
      ++rep.idle_open;
    close(fd);
  }
  if (post.joinable()) post.join();
}

struct SoakRun {
  Stats good, fast;
  int64_t timeouts = 0;
  long hwm_kb = -1, rss_kb = -1;
  AttackReport attack;
};

struct SoakSetup {
  bool speech = false;
  std::vector<std::string> server_args;
  rlim_t nofile = 0;
  int streams = 0;
  double wps = 3, seconds = 60;
  std::string good_key, attacker_key, attacks = "all";
  std::vector<int16_t> audio;
  int sample_rate = 16000;
  std::string log_prefix;
};

std::unique_ptr<SoakRun> soak_once(const SoakSetup& su, bool attack) {
  const std::string log = su.log_prefix + (attack ? "attacked.log" : "baseline.log");
  auto server = start_server_process(su.server_args, su.nofile, log);
  if (!server) return nullptr;
  auto run = std::make_unique<SoakRun>();
  net::io_context ioc;
  const double stop_at = now_ms() + su.seconds * 1000;
  const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server->port));
  const int bound_ms = static_cast<int>(su.seconds * 1500 + 10000);
  // Text: each good speaker is one stream for the whole run. Speech: each speaks utterance after utterance
  // (one pass of the recording per stream, the next stream once the last one finished) until the run's end;
  // their first utterances are staggered over one utterance's length.
  std::function<void(int, double)> spawn = [&](int id, double delay_ms) {
    Speaker::Config cfg;
    if (!su.good_key.empty()) cfg.target += "?key=" + su.good_key;
    if (su.speech) {
      cfg.audio = &su.audio, cfg.sample_rate = su.sample_rate;
      cfg.one_pass = true;
      cfg.start_delay_ms = delay_ms;
      cfg.on_finished = [&spawn, id, stop_at] {
        if (now_ms() < stop_at) spawn(id, 0);
      };
    }
    ++run->good.started;
    std::make_shared<Speaker>(ioc, id, su.wps, stop_at, run->good, cfg)->start(ep);
  };
  const double utterance_ms = 1000.0 * static_cast<double>(su.audio.size()) / su.sample_rate;
  for (int i = 0; i < su.streams; ++i) spawn(i, su.speech ? i * utterance_ms / su.streams : 0);
  std::thread attacker;
  if (attack && su.speech) {
    Speaker::Config cfg;
    cfg.bind = "127.0.0.2";
    cfg.audio = &su.audio;
    cfg.sample_rate = su.sample_rate;
    cfg.fast = true;
    std::make_shared<Speaker>(ioc, su.streams, su.wps, stop_at, run->fast, cfg)->start(ep);
  } else if (attack) {
    attacker = std::thread([&, port = server->port] {
      std::this_thread::sleep_for(std::chrono::seconds(2));  // the good streams are under way
      text_attacks(port, su.attacker_key, stop_at, bound_ms / 1000, su.attacks, run->attack);
    });
  }
  ioc.run_for(std::chrono::milliseconds(bound_ms));
  if (attacker.joinable()) attacker.join();
  run->hwm_kb = proc_status_kb(server->pid, "VmHWM");
  run->rss_kb = proc_status_kb(server->pid, "VmRSS");
  stop_server_process(*server);
  // Streams that neither finished nor failed in time.
  run->timeouts = run->good.started - run->good.finished - run->good.errors;
  return run;
}

// Word lag of the good streams: client-side for text, the server's lag_ms for audio (the client cannot tell
// which frame completed a chunk).
double lag_q(const SoakSetup& su, const Stats& s, double q) {
  return quantile(su.speech ? s.server_ms : s.client_ms, q);
}

void print_soak_row(const SoakSetup& su, const char* name, const SoakRun& r) {
  const auto& s = r.good;
  std::printf("%-9s %7lld %9lld %9lld %6lld %8lld %9.1f %9.1f %9.1f %9.1f %10.1f %9.1f\n", name,
              static_cast<long long>(s.started), static_cast<long long>(s.source_words),
              static_cast<long long>(s.target_words), static_cast<long long>(s.errors),
              static_cast<long long>(r.timeouts), lag_q(su, s, 0.5), lag_q(su, s, 0.99),
              quantile(s.server_ms, 0.5), quantile(s.server_ms, 0.99), r.hwm_kb / 1024.0, r.rss_kb / 1024.0);
}

int run_soak(SoakSetup su) {
  const std::string what =
      su.speech ? " of real-time audio" : " at " + std::to_string(static_cast<int>(su.wps)) + " words/s";
  std::printf("soak: %s, %d good streams%s for %g s; server: %s", su.speech ? "speech" : "text", su.streams,
              what.c_str(), su.seconds, su.server_args[0].c_str());
  for (size_t i = 1; i < su.server_args.size(); ++i) std::printf(" %s", su.server_args[i].c_str());
  if (su.nofile) std::printf(" (RLIMIT_NOFILE %llu)", static_cast<unsigned long long>(su.nofile));
  std::printf("\n");
  std::fflush(stdout);
  auto base = soak_once(su, false);
  if (!base) return 1;
  auto hit = soak_once(su, true);
  if (!hit) return 1;
  std::printf("%-9s %7s %9s %9s %6s %8s %9s %9s %9s %9s %10s %9s\n", "run", "streams",
              su.speech ? "frames" : "src_words", "tgt_words", "errors", "timeouts", "p50_ms", "p99_ms",
              "srv_p50", "srv_p99", "peak_rss_MB", "rss_MB");
  print_soak_row(su, "baseline", *base);
  print_soak_row(su, "attacked", *hit);
  if (su.speech) {
    const auto& f = hit->fast;
    std::printf("fast sender (127.0.0.2): %g s of audio as fast as written, %lld words, %lld errors, %s\n",
                120.0, static_cast<long long>(f.target_words), static_cast<long long>(f.errors),
                f.finished ? "finished" : "not finished within the bound");
  } else {
    const auto& a = hit->attack;
    std::printf(
        "attackers (127.0.0.2): malformed messages %d sent, %d answered with an error event, "
        "%d closed by the server, %d handshakes refused\n",
        a.malformed_sent.load(), a.malformed_error_event.load(), a.malformed_closed.load(),
        a.malformed_refused.load());
    std::printf("  foreign Origin: %d x 403, %d other; no key: %d x 401, %d other\n", a.origin_403.load(),
                a.origin_other.load(), a.nokey_401.load(), a.nokey_other.load());
    std::printf(
        "  idle connections: %d connected (%d failed); at the end %d answered 503, %d closed by the "
        "server, %d still open\n",
        a.idle_connected, a.idle_failed, a.idle_answered, a.idle_closed, a.idle_open);
    std::printf("  30 KB POST /v1/translate: status %d after %.0f ms\n", a.post_status, a.post_ms);
  }
  const double p99_base = lag_q(su, base->good, 0.99), p99_hit = lag_q(su, hit->good, 0.99);
  const bool ok_errors =
      hit->good.errors == 0 && hit->timeouts == 0 && base->good.errors == 0 && base->timeouts == 0;
  const bool ok_lag = p99_hit <= 2 * p99_base;
  const bool ok_rss = hit->hwm_kb >= 0 && base->hwm_kb >= 0 && hit->hwm_kb <= base->hwm_kb + 100 * 1024;
  std::printf(
      "good streams: 0 errors and 0 timeouts: %s; p99 word lag %.1f ms <= 2 x %.1f ms: %s; "
      "peak RSS %.1f MB <= %.1f + 100 MB: %s\n",
      ok_errors ? "PASS" : "FAIL", p99_hit, p99_base, ok_lag ? "PASS" : "FAIL", hit->hwm_kb / 1024.0,
      base->hwm_kb / 1024.0, ok_rss ? "PASS" : "FAIL");
  std::printf("soak: %s (server logs: %sbaseline.log, %sattacked.log)\n",
              ok_errors && ok_lag && ok_rss ? "PASS" : "FAIL", su.log_prefix.c_str(), su.log_prefix.c_str());
  return ok_errors && ok_lag && ok_rss ? 0 : 1;
}

int soak_main(bool speech, std::string model_dir, int streams, double wps, double seconds, int threads,
              std::string gpstream_bin, std::string attacks) {
  const std::string src = GPSTREAM_SOURCE_DIR_STR;
  if (gpstream_bin.empty())
    gpstream_bin = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "gpstream").string();
  if (model_dir.empty()) model_dir = src + (speech ? "/models/gpstream-speech-en" : "/models/gpstream-en-fr");
  if (seconds <= 0 || seconds > 3600) {
    std::fprintf(stderr, "bench_serve: need 0 < --seconds <= 3600\n");
    return 2;
  }
  SoakSetup su;
  su.speech = speech;
  su.streams = streams > 0 ? streams : speech ? 16 : 64;
  su.wps = wps;
  su.seconds = seconds;
  su.attacks = std::move(attacks);
  su.log_prefix = "/tmp/bench_serve_soak_" + std::to_string(getpid()) + "_";
  su.server_args = {gpstream_bin, "serve", "-m", model_dir, "--port", "0", "--max-tokens", "256"};
  if (threads > 0) su.server_args.insert(su.server_args.end(), {"-t", std::to_string(threads)});
  // Room for the good streams and, beside them, the attackers' (the translate request's 4 lines, the
  // malformed streams 8 at a time, the fast audio sender).
  const std::string max_sessions = std::to_string(su.streams + 16), per_client = std::to_string(su.streams);
  su.server_args.insert(su.server_args.end(),
                        {"--max-sessions", max_sessions, "--max-sessions-per-client", per_client});
  if (speech) {
    const std::string wav = src + "/tests/speech/data/shipped-dev/wav/dev-000001.wav";
    auto a = audio::read_wav_file(wav);
    if (!a) return std::fprintf(stderr, "bench_serve: %s\n", a.error().message().c_str()), 1;
    su.sample_rate = static_cast<int>(a->sample_rate);
    for (const float x : a->samples)
      su.audio.push_back(static_cast<int16_t>(std::clamp(x * 32768.0f, -32768.0f, 32767.0f)));
    su.audio.resize(su.audio.size() + static_cast<size_t>(su.sample_rate / 2), 0);  // 0.5 s of silence
  } else {
    su.good_key = "soak-good-client-0123456789abcdef";
    su.attacker_key = "soak-hostile-client-0123456789abcdef";
    const std::string keys = su.log_prefix + "api_keys.txt";
    std::ofstream(keys) << su.good_key << "\n" << su.attacker_key << "\n";
    su.server_args.insert(su.server_args.end(), {"--api-key-file", keys});
    su.nofile = 1024;
  }
  // The attackers' 1,100 idle connections and the good streams need descriptors of their own here.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  return run_soak(std::move(su));
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  std::string model_dir = std::string(GPSTREAM_SOURCE_DIR_STR) + "/models/gpstream-en-fr";
  int streams = 64, threads = 0, connect = 0;
  double wps = 3, seconds = 60, realtime_ms = 2000;
  bool sweep = false, json = false, model_given = false, streams_given = false;
  std::string soak, gpstream_bin, attacks = "all";
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_serve: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "-m"))
      model_dir = next("-m"), model_given = true;
    else if (!std::strcmp(argv[i], "--streams"))
      streams = std::atoi(next("--streams")), streams_given = true;
    else if (!std::strcmp(argv[i], "--soak"))
      soak = next("--soak");
    else if (!std::strcmp(argv[i], "--gpstream"))
      gpstream_bin = next("--gpstream");
    else if (!std::strcmp(argv[i], "--attacks"))
      attacks = next("--attacks");
    else if (!std::strcmp(argv[i], "--wps"))
      wps = std::atof(next("--wps"));
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(next("--seconds"));
    else if (!std::strcmp(argv[i], "-t"))
      threads = std::atoi(next("-t"));
    else if (!std::strcmp(argv[i], "--realtime-ms"))
      realtime_ms = std::atof(next("--realtime-ms"));
    else if (!std::strcmp(argv[i], "--connect"))
      connect = std::atoi(next("--connect"));
    else if (!std::strcmp(argv[i], "--sweep"))
      sweep = true;
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else {
      std::fprintf(stderr,
                   "usage: bench_serve [-m MODEL] [--streams N] [--wps W] [--seconds T] [-t THREADS] "
                   "[--realtime-ms MS] [--sweep] [--json] [--connect PORT]\n"
                   "       bench_serve --soak text|speech [--seconds T] [--streams N] [-m MODEL] "
                   "[-t THREADS] [--gpstream PATH]\n"
                   "                   [--attacks all|post,malformed,origin,nokey,idle]\n");
      return 2;
    }
  }
  if (!soak.empty()) {
    if (soak != "text" && soak != "speech") {
      std::fprintf(stderr, "bench_serve: --soak takes text or speech\n");
      return 2;
    }
    return soak_main(soak == "speech", model_given ? model_dir : "", streams_given ? streams : 0, wps,
                     seconds, threads, gpstream_bin, attacks);
  }
  if (streams < 1 || wps <= 0 || seconds <= 0 || seconds > 3600) {
    std::fprintf(stderr, "bench_serve: need --streams >= 1, --wps > 0, 0 < --seconds <= 3600\n");
    return 2;
  }
  std::unique_ptr<stream::StreamingModel> model;
  std::unique_ptr<serve::Server> server;
  int port = connect;
  if (!connect) {
    auto m = stream::StreamingModel::load(model_dir, threads);
    if (!m) return std::fprintf(stderr, "bench_serve: %s\n", m.error().message().c_str()), 1;
    model = std::make_unique<stream::StreamingModel>(std::move(*m));
    stream::SessionOptions so = model->default_options();
    so.max_target_tokens = 256;
    serve::ServerOptions o;
    o.port = 0;
    o.engine.max_sessions = streams + 8;
    o.max_sessions_per_client = o.engine.max_sessions;  // every stream comes from this one client
    auto s = serve::Server::start(*model, so, o);
    if (!s) return std::fprintf(stderr, "bench_serve: %s\n", s.error().message().c_str()), 1;
    server = std::move(*s);
    port = server->port();
  }
  if (!json)
    std::printf("%7s %5s %6s %9s %9s %6s %9s %9s %9s %9s %9s %s\n", "streams", "wps", "sec", "src_words",
                "tgt_words", "errors", "p50_ms", "p99_ms", "srv_p50", "srv_p99", "drain_ms", "realtime");
  int best = 0;
  std::vector<int> ns;
  if (sweep) {
    for (int n = 1; n < streams; n *= 2) ns.push_back(n);
  }
  ns.push_back(streams);
  for (int n : ns) {
    RunResult r = run_load(port, n, wps, seconds, realtime_ms);
    print(r, wps, seconds, json);
    if (r.realtime) best = n;
    if (sweep && !r.realtime) break;
    // Let the server retire the finished streams before the next run.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (sweep) {
    if (json)
      std::printf("{\"max_realtime_streams\": %d}\n", best);
    else
      std::printf("largest number of real-time streams: %d (p99 latency and drain <= %.0f ms, 0 errors)\n",
                  best, realtime_ms);
  }
  return 0;
}
