// Private to serve/: the Beast types shared by server.cpp (listener, HTTP) and websocket_session.cpp.
#pragma once

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "serve/access_policy.h"
#include "serve/client_quota.h"
#include "serve/connection_limit.h"
#include "serve/request_log.h"
#include "serve/server.h"
#include "serve/simuleval_agent.h"

namespace gpstream::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Server::Impl {
  Impl(stream::StreamingModel& m, stream::SessionOptions defaults, ServerOptions o);

  stream::StreamingModel& model;
  ServerOptions opts;
  AccessPolicy access;
  std::unique_ptr<ClientQuota> quota;  // per-client stream slots (max_sessions_per_client)
  Metrics metrics;
  Engine engine;  // destroyed after the io_context (declared before it)
  std::unique_ptr<SimulEvalAgent> simuleval;
  // Connections (connection_limit.h) and graceful shutdown (Server::drain); declared before the io_context,
  // whose destruction ends the sessions that use them.
  int max_connections = 0;                 // opts.max_connections, resolved
  std::atomic<int> refusals_in_flight{0};  // 503s being written to connections past the limit
  std::atomic<uint64_t> next_connection_id{1};
  bool accept_paused = false;  // accept() waits out descriptor exhaustion (its strand)
  std::atomic<bool> draining{false};
  std::atomic<bool> drain_cut_short{false};  // a second signal: drain() returns at once
  std::atomic<int> pending_replies{0};       // HTTP replies waiting on the engine (translate, /output)
  std::mutex drain_mu;
  std::map<uint64_t, std::function<void()>> drain_hooks;  // per live WebSocket connection: begins its drain
  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> work;
  tcp::acceptor acceptor;
  net::steady_timer housekeeping;
  net::steady_timer accept_pause;  // the wait before accepting again after EMFILE/ENFILE
  std::unique_ptr<net::signal_set> signals;
  std::vector<std::thread> threads;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop_requested = false;
  std::atomic<bool> stopped{false};

  void accept();
  void tick();
  // Serves an accepted connection, or refuses it with 503 (over the limit, or draining).
  void admit(tcp::socket socket);
  void refuse(tcp::socket socket, const std::string& client, const char* code, const std::string& message);
  // A WebSocket connection's drain hook (called on any thread; it posts to the connection): registered for
  // the connection's life. One registered while draining is called at once.
  void add_drain_hook(uint64_t connection, std::function<void()> hook);
  void remove_drain_hook(uint64_t connection);
  // Writes a line to the request log, if there is one.
  void log(std::string_view event, const nlohmann::ordered_json& fields) {
    if (opts.request_log) opts.request_log->write(event, fields);
  }
  bool log_text() const { return opts.request_log && opts.request_log->log_text(); }
};

// One accepted TCP connection: its place under the connection limit and its identity in the log. It moves
// from the HTTP session to the WebSocket stream the connection may become.
struct Connection {
  ConnectionSlot slot;
  uint64_t id = 0;
  std::string client;  // the peer, "address:port"
};

// Starts a WebSocket stream on an upgraded HTTP connection; `quota_slot` (the client's, see
// client_quota.h) and `connection` are held until the connection ends.
void start_websocket_session(tcp::socket socket, http::request<http::string_body> request,
                             Server::Impl& server, ClientQuota::Lease quota_slot, Connection connection);

}  // namespace gpstream::serve
