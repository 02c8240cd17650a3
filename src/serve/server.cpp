// Listener, HTTP connections and routing. WebSocket upgrades to /v1/stream go to
// websocket_session.cpp; everything else is answered here.
#include <cstdio>

#include "audio/log_mel.h"

#include "serve/server_impl.h"
#include "serve/static_files.h"
#include "serve/stream_protocol.h"
#include "serve/translate_request.h"

namespace gpstream::serve {
namespace {

using Response = http::response<http::string_body>;

Response make_response(unsigned version, http::status status, std::string body, const std::string& type) {
  Response res{status, version};
  res.set(http::field::server, "gpstream");
  res.set(http::field::content_type, type);
  res.set(http::field::cache_control, "no-store");
  res.body() = std::move(body);
  return res;
}

Response json_response(unsigned version, http::status status, std::string body) {
  return make_response(version, status, std::move(body), "application/json");
}

Response error_response(unsigned version, http::status status, std::string_view code, std::string_view message) {
  return json_response(version, status, error_event(code, message));
}

std::string path_of(std::string_view target) {
  const size_t q = target.find('?');
  return std::string(target.substr(0, q));
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, Server::Impl& server) : stream_(std::move(socket)), srv_(server) {}

  void run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(srv_.opts.max_body_bytes);
    parser_->header_limit(16 << 10);
    stream_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(srv_.opts.http_timeout_ms)));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return close();
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      return send(error_response(11, http::status::payload_too_large, "too_large",
                                 "request body over " + std::to_string(srv_.opts.max_body_bytes) + " bytes"));
    }
    if (ec) {
      // A malformed request gets a 400 when the connection can still carry it; timeouts and resets end it.
      if (ec.category() == beast::error_code(http::error::bad_target).category()) {
        keep_alive_ = false;
        return send(error_response(11, http::status::bad_request, "bad_request", ec.message()));
      }
      return close();
    }
    http::request<http::string_body> req = parser_->release();
    ++srv_.metrics.http_requests;
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    if (websocket::is_upgrade(req)) {
      if (path_of(req.target()) != "/v1/stream")
        return send(error_response(version_, http::status::not_found, "not_found", "WebSocket streams live at /v1/stream"));
      stream_.expires_never();
      start_websocket_session(stream_.release_socket(), std::move(req), srv_);
      return;
    }
    route(std::move(req));
  }

  // Replies later from any thread (engine callbacks).
  std::function<void(Response)> deferred() {
    stream_.expires_never();
    return [self = shared_from_this()](Response res) {
      net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->send(std::move(res)); });
    };
  }

  void route(http::request<http::string_body> req) {
    const std::string path = path_of(req.target());
    const auto method = req.method();
    const unsigned v = version_;
    if (path == "/health") {
      if (method != http::verb::get) return send(method_not_allowed("GET"));
      const auto& so = srv_.engine.defaults();
      std::string body = "{\"status\": \"ok\", \"sessions\": " + std::to_string(srv_.engine.open_sessions()) +
                         ", \"max_sessions\": " + std::to_string(srv_.opts.engine.max_sessions) +
                         ", \"source_lang\": " + json_string(srv_.model.meta.source_lang) +
                         ", \"target_lang\": " + json_string(srv_.model.meta.target_lang) +
                         ", \"paradigm\": " + json_string(stream::paradigm_name(so.paradigm)) +
                         ", \"k\": " + std::to_string(so.k) + ", \"phi\": " + json_string(so.phi.to_string()) +
                         ", \"input\": " + (srv_.opts.speech_encoder ? "\"audio\"" : "\"text\"") + "}";
      return send(json_response(v, http::status::ok, std::move(body)));
    }
    if (path == "/metrics") {
      if (method != http::verb::get) return send(method_not_allowed("GET"));
      return send(make_response(v, http::status::ok, srv_.metrics.render(), "text/plain; version=0.0.4; charset=utf-8"));
    }
    if (path == "/v1/translate") {
      if (method != http::verb::post) return send(method_not_allowed("POST"));
      auto request = parse_translate_request(req.body(), srv_.opts.max_translate_lines);
      if (!request) return send(error_response(v, http::status::bad_request, "bad_request", request.error().message()));
      auto reply = deferred();
      run_translate(srv_.engine, std::move(*request), [reply, v](int status, std::string body) {
        reply(json_response(v, static_cast<http::status>(status), std::move(body)));
      });
      return;
    }
    // SimulEval's remote agent (metrics.md §A.8): POST /reset, PUT /input, GET /output, GET /.
    if (path == "/reset") {
      if (method != http::verb::post) return send(method_not_allowed("POST"));
      Status st = srv_.simuleval->reset();
      if (!st.ok()) return send(error_response(v, http::status::service_unavailable, "busy", st.error().message()));
      return send(make_response(v, http::status::ok, "", "text/html; charset=UTF-8"));
    }
    if (path == "/input") {
      if (method != http::verb::put) return send(method_not_allowed("PUT"));
      Status st = srv_.simuleval->input(req.body());
      if (!st.ok()) return send(error_response(v, http::status::bad_request, "bad_segment", st.error().message()));
      return send(make_response(v, http::status::ok, "", "text/html; charset=UTF-8"));
    }
    if (path == "/output") {
      if (method != http::verb::get) return send(method_not_allowed("GET"));
      auto reply = deferred();
      srv_.simuleval->output([reply, v](std::string segment) {
        reply(make_response(v, http::status::ok, std::move(segment), "text/html; charset=UTF-8"));
      });
      return;
    }
    if (method != http::verb::get && method != http::verb::head)
      return send(error_response(v, http::status::not_found, "not_found", "no such endpoint: " + path));
    // GET /: the demo page for browsers (they ask for text/html), SimulEval's agent info otherwise.
    if (path == "/") {
      const auto accept = req[http::field::accept];
      const bool browser = accept.find("text/html") != std::string_view::npos;
      if (!browser || srv_.opts.web_root.empty())
        return send(make_response(v, http::status::ok, srv_.simuleval->info(), "text/html; charset=UTF-8"));
    }
    if (path == "/simuleval") return send(make_response(v, http::status::ok, srv_.simuleval->info(), "text/html; charset=UTF-8"));
    auto file = load_static_file(srv_.opts.web_root, path);
    if (!file) return send(error_response(v, http::status::not_found, "not_found", "no such endpoint: " + path));
    Response res = make_response(v, http::status::ok, std::move(file->body), file->content_type);
    res.set(http::field::cache_control, "no-cache");
    if (method == http::verb::head) {
      res.content_length(res.body().size());
      res.body().clear();
      return send(std::move(res), /*head=*/true);
    }
    return send(std::move(res));
  }

  Response method_not_allowed(const char* allowed) {
    Response res = error_response(version_, http::status::method_not_allowed, "method_not_allowed",
                                  std::string("use ") + allowed);
    res.set(http::field::allow, allowed);
    return res;
  }

  void send(Response res, bool head = false) {
    if (static_cast<unsigned>(res.result_int()) >= 400) ++srv_.metrics.http_errors;
    res.keep_alive(keep_alive_);
    if (!head) res.prepare_payload();
    auto sp = std::make_shared<Response>(std::move(res));
    stream_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(srv_.opts.http_timeout_ms)));
    http::async_write(stream_, *sp, [self = shared_from_this(), sp](beast::error_code ec, size_t) {
      if (ec) return self->close();
      if (sp->need_eof()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Server::Impl& srv_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
};

}  // namespace

Server::Impl::Impl(stream::StreamingModel& m, stream::SessionOptions defaults, ServerOptions o)
    : model(m),
      opts(std::move(o)),
      engine(m, std::move(defaults), opts.engine, metrics, opts.speech_encoder),
      work(net::make_work_guard(ioc)),
      acceptor(net::make_strand(ioc)),
      housekeeping(ioc) {}

void Server::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (!ec) std::make_shared<HttpSession>(std::move(socket), *this)->run();
    accept();
  });
}

void Server::Impl::tick() {
  housekeeping.expires_after(std::chrono::seconds(1));
  housekeeping.async_wait([this](beast::error_code ec) {
    if (ec || stopped) return;
    simuleval->expire_if_idle(opts.idle_timeout_ms);
    tick();
  });
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { stop(); }

Result<std::unique_ptr<Server>> Server::start(stream::StreamingModel& model, stream::SessionOptions defaults,
                                              ServerOptions options) {
  if (options.io_threads < 1) return invalid_argument("io threads must be at least 1");
  if (options.port < 0 || options.port > 65535) return invalid_argument("port must be 0..65535");
  if (const audio::SpeechEncoderModel* enc = options.speech_encoder) {
    if (enc->config().llm_hidden != model.model->config().n_embd)
      return invalid_argument("the speech encoder writes rows of " + std::to_string(enc->config().llm_hidden) +
                              " floats but the model's embeddings have " + std::to_string(model.model->config().n_embd));
    if (enc->config().n_mels != audio::kLogMelBins)
      return invalid_argument("the speech encoder takes " + std::to_string(enc->config().n_mels) + " mel bins, not " +
                              std::to_string(audio::kLogMelBins));
  }
  auto impl = std::make_unique<Impl>(model, std::move(defaults), std::move(options));
  Impl& s = *impl;
  auto simuleval_options = s.engine.resolve(StreamOptions{}, /*continuous_default=*/false);
  if (!simuleval_options) return simuleval_options.error();
  s.simuleval = std::make_unique<SimulEvalAgent>(s.engine, *simuleval_options);

  beast::error_code ec;
  const auto address = net::ip::make_address(s.opts.host, ec);
  if (ec) return invalid_argument("--host: '" + s.opts.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(s.opts.port));
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return io_error("cannot listen on " + s.opts.host + ":" + std::to_string(s.opts.port) + ": " + ec.message());

  s.engine.start();
  s.accept();
  s.tick();
  for (int i = 0; i < s.opts.io_threads; ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::port() const { return impl_->acceptor.local_endpoint().port(); }

const Metrics& Server::metrics() const { return impl_->metrics; }

int Server::open_sessions() const { return impl_->engine.open_sessions(); }

void Server::request_stop() {
  {
    std::lock_guard lock(impl_->stop_mu);
    impl_->stop_requested = true;
  }
  impl_->stop_cv.notify_all();
}

void Server::wait() {
  std::unique_lock lock(impl_->stop_mu);
  impl_->stop_cv.wait(lock, [&] { return impl_->stop_requested; });
}

void Server::stop_on_signals() {
  impl_->signals = std::make_unique<net::signal_set>(impl_->ioc, SIGINT, SIGTERM);
  impl_->signals->async_wait([this](beast::error_code ec, int) {
    if (!ec) request_stop();
  });
}

void Server::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  Impl& s = *impl_;
  // Streams get a "shutdown" error event; give the io threads a moment to send them.
  s.engine.stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  s.work.reset();
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  beast::error_code ec;
  s.acceptor.close(ec);
}

}  // namespace gpstream::serve
