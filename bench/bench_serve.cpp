// Server load test (docs/performance.md), loopback only and bounded in time: N concurrent WebSocket streams, each
// a speaker sending W source words per second for T seconds (continuous English text, sentence after
// sentence), then the end of the source. Reports per-word latency — client side: from sending the
// last source word a target word needed to receiving it; server side: the events' lag_ms — as p50/p99,
// the error count, and how long the streams took to finish after the speakers stopped. --sweep runs
// N = 1, 2, 4, ... up to --streams and reports the largest N the server sustains in real time (no
// errors, p99 latency under --realtime-ms, finishing within --realtime-ms of the speakers).
//   bench_serve [-m MODEL] [--streams 64] [--wps 3] [--seconds 60] [-t THREADS] [--sweep] [--json]
//               [--connect PORT]   (load a server that is already running instead of starting one)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "serve/server.h"
#include "stream/session.h"

using namespace gpstream;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
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
  int64_t source_words = 0, target_words = 0, errors = 0, finished = 0;
  double last_finish_ms = 0;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

// One speaker: sends a word every 1000/W ms until `stop_at`, then the end of the source, and reads
// events all along. Runs on the shared io_context thread.
class Speaker : public std::enable_shared_from_this<Speaker> {
 public:
  Speaker(net::io_context& ioc, int id, double wps, double stop_at, Stats& stats)
      : ws_(ioc), timer_(ws_.get_executor()), id_(id), period_ms_(1000.0 / wps), stop_at_(stop_at), stats_(stats) {
    for (size_t s = 0; s < std::size(kText); ++s)
      for (const auto& w : tokenizer_words(kText[(s + static_cast<size_t>(id)) % std::size(kText)])) words_.push_back(w);
    sent_.emplace_back();
  }

  void start(const tcp::endpoint& ep) {
    beast::get_lowest_layer(ws_).async_connect(ep, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->error("connect", ec.message());
      self->ws_.async_handshake("127.0.0.1", "/v1/stream", [self](beast::error_code ec2) {
        if (ec2) return self->error("handshake", ec2.message());
        self->send(R"({"type": "start", "continuous": true})");
        self->t0_ = now_ms();
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

  void tick() {
    const double now = now_ms();
    if (now >= stop_at_) {
      send(R"({"type": "end"})");
      return;
    }
    const std::string& w = words_[next_ % words_.size()];
    ++next_;
    sent_.back().push_back(now);
    send(nlohmann::json{{"type", "source"}, {"text", w + " "}}.dump());
    ++stats_.source_words;
    if (stream::ends_sentence(w)) sent_.emplace_back();
    timer_.expires_at(std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(t0_ + next_ * period_ms_))));
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
    } else if (type == "error") {
      error(j.value("code", ""), j.value("message", ""));
    }
  }

  void send(std::string frame) {
    queue_.push_back(std::move(frame));
    if (queue_.size() == 1) write();
  }

  void write() {
    ws_.text(true);
    ws_.async_write(net::buffer(queue_.front()), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->error("write", ec.message());
      self->queue_.pop_front();
      if (!self->queue_.empty()) self->write();
    });
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
  std::deque<std::string> queue_;
  int id_;
  double period_ms_, stop_at_, t0_ = 0;
  std::vector<std::string> words_;
  size_t next_ = 0;
  std::deque<std::vector<double>> sent_;  // per unfinished sentence: send time of each word
  size_t segment_base_ = 0;
  bool done_ = false;
  Stats& stats_;
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
    std::printf("{\"streams\": %d, \"wps\": %g, \"seconds\": %g, \"source_words\": %lld, \"target_words\": %lld, "
                "\"errors\": %lld, \"p50_ms\": %.1f, \"p99_ms\": %.1f, \"server_p50_ms\": %.1f, \"server_p99_ms\": %.1f, "
                "\"drain_ms\": %.1f, \"realtime\": %s}\n",
                r.streams, wps, seconds, static_cast<long long>(s.source_words), static_cast<long long>(s.target_words),
                static_cast<long long>(s.errors), quantile(s.client_ms, 0.5), quantile(s.client_ms, 0.99),
                quantile(s.server_ms, 0.5), quantile(s.server_ms, 0.99), r.drain_ms, r.realtime ? "true" : "false");
  } else {
    std::printf("%7d %5g %6g %9lld %9lld %6lld %9.1f %9.1f %9.1f %9.1f %9.1f %s\n", r.streams, wps, seconds,
                static_cast<long long>(s.source_words), static_cast<long long>(s.target_words),
                static_cast<long long>(s.errors), quantile(s.client_ms, 0.5), quantile(s.client_ms, 0.99),
                quantile(s.server_ms, 0.5), quantile(s.server_ms, 0.99), r.drain_ms, r.realtime ? "yes" : "no");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir = std::string(GPSTREAM_SOURCE_DIR_STR) + "/models/gpstream-en-fr";
  int streams = 64, threads = 0, connect = 0;
  double wps = 3, seconds = 60, realtime_ms = 2000;
  bool sweep = false, json = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_serve: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "-m")) model_dir = next("-m");
    else if (!std::strcmp(argv[i], "--streams")) streams = std::atoi(next("--streams"));
    else if (!std::strcmp(argv[i], "--wps")) wps = std::atof(next("--wps"));
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(next("--seconds"));
    else if (!std::strcmp(argv[i], "-t")) threads = std::atoi(next("-t"));
    else if (!std::strcmp(argv[i], "--realtime-ms")) realtime_ms = std::atof(next("--realtime-ms"));
    else if (!std::strcmp(argv[i], "--connect")) connect = std::atoi(next("--connect"));
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: bench_serve [-m MODEL] [--streams N] [--wps W] [--seconds T] [-t THREADS] "
                           "[--realtime-ms MS] [--sweep] [--json] [--connect PORT]\n");
      return 2;
    }
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
    std::printf("%7s %5s %6s %9s %9s %6s %9s %9s %9s %9s %9s %s\n", "streams", "wps", "sec", "src_words", "tgt_words",
                "errors", "p50_ms", "p99_ms", "srv_p50", "srv_p99", "drain_ms", "realtime");
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
    if (json) std::printf("{\"max_realtime_streams\": %d}\n", best);
    else std::printf("largest number of real-time streams: %d (p99 latency and drain <= %.0f ms, 0 errors)\n", best,
                     realtime_ms);
  }
  return 0;
}
