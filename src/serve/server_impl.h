// Private to serve/: the Beast types shared by server.cpp (listener, HTTP) and websocket_session.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "serve/access_policy.h"
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
  Metrics metrics;
  Engine engine;                               // destroyed after the io_context (declared before it)
  std::unique_ptr<SimulEvalAgent> simuleval;
  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> work;
  tcp::acceptor acceptor;
  net::steady_timer housekeeping;
  std::unique_ptr<net::signal_set> signals;
  std::vector<std::thread> threads;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop_requested = false;
  std::atomic<bool> stopped{false};

  void accept();
  void tick();
};

// Starts a WebSocket stream on an upgraded HTTP connection.
void start_websocket_session(tcp::socket socket, http::request<http::string_body> request, Server::Impl& server);

}  // namespace gpstream::serve
