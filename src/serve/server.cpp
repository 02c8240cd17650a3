// Listener, HTTP connections and routing. Every request first passes the Host and Origin checks
// (access_policy.h); then WebSocket upgrades to /v1/stream go to websocket_session.cpp, and everything else,
// CORS preflights included, is answered here.
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

// IPv4 addresses that reach a dual-stack socket as IPv6 (::ffff:127.0.0.1) as IPv4.
net::ip::address unmapped(const net::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
  return a;
}

// An address as a Host header writes it: "127.0.0.1", "[::1]".
std::string host_form(const net::ip::address& a) {
  if (a.is_v4()) return a.to_string();
  std::string s = "[";
  s.append(a.to_string()).append("]");
  return s;
}

LocalAddress local_address_of(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint endpoint = socket.local_endpoint(ec);
  if (ec) return {};
  const net::ip::address a = unmapped(endpoint.address());
  return {host_form(a), a.is_loopback()};
}

constexpr const char* kMethods = "GET, HEAD, POST, PUT, OPTIONS";

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, Server::Impl& server)
      : local_(local_address_of(socket)), stream_(std::move(socket)), srv_(server) {}

  void run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    cors_origin_.clear();
    vary_origin_ = false;
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
    if (!admitted(req)) return;
    if (req.method() == http::verb::options) return send(preflight());
    if (websocket::is_upgrade(req)) {
      if (path_of(req.target()) != "/v1/stream")
        return send(error_response(version_, http::status::not_found, "not_found", "WebSocket streams live at /v1/stream"));
      stream_.expires_never();
      start_websocket_session(stream_.release_socket(), std::move(req), srv_);
      return;
    }
    route(std::move(req));
  }

  // The Host and Origin checks (access_policy.h), before anything else; false: the refusal is being sent.
  // HTTP/1.0 requests may lack Host (no browser sends one without it); HTTP/1.1 ones must have it (RFC 9112).
  bool admitted(const http::request<http::string_body>& req) {
    const size_t hosts = req.count(http::field::host);
    if (hosts > 1 || (hosts == 0 && version_ >= 11)) {
      send(error_response(version_, http::status::bad_request, "bad_request",
                          hosts ? "several Host headers" : "no Host header"));
      return false;
    }
    const std::string_view host = hosts ? req[http::field::host] : std::string_view();
    if (hosts && !srv_.access.host_allowed(host, local_)) {
      send(error_response(version_, http::status::misdirected_request, "bad_host",
                          "this server does not answer to that Host name (gpstream serve --allow-host NAME "
                          "adds one)"));
      return false;
    }
    const size_t origins = req.count(http::field::origin);
    if (origins == 0) return true;
    vary_origin_ = true;
    const std::string_view origin = req[http::field::origin];
    if (origins > 1 || !srv_.access.origin_allowed(origin, host)) {
      send(error_response(version_, http::status::forbidden, "forbidden_origin",
                          "web pages from this origin may not use the server (gpstream serve --allow-origin "
                          "ORIGIN opens it)"));
      return false;
    }
    cors_origin_ = srv_.access.allow_origin_header(origin);
    return true;
  }

  // OPTIONS, on any path: a CORS preflight from an allowed origin (others were refused by admitted()), or a
  // plain OPTIONS from a program.
  Response preflight() {
    Response res{http::status::no_content, version_};
    res.set(http::field::server, "gpstream");
    res.set(http::field::allow, kMethods);
    if (!cors_origin_.empty()) {
      res.set(http::field::access_control_allow_methods, kMethods);
      res.set(http::field::access_control_allow_headers, "Content-Type, Authorization");
      res.set(http::field::access_control_max_age, "600");
    }
    return res;
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
    if (!cors_origin_.empty()) res.set(http::field::access_control_allow_origin, cors_origin_);
    if (vary_origin_) res.set(http::field::vary, "Origin");
    res.keep_alive(keep_alive_);
    if (!head && res.result() != http::status::no_content) res.prepare_payload();  // 204: no Content-Length
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

  const LocalAddress local_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Server::Impl& srv_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::string cors_origin_;   // the current request's Access-Control-Allow-Origin ("" for none)
  bool vary_origin_ = false;  // the current request had an Origin header
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
  beast::error_code ec;
  const auto address = net::ip::make_address(options.host, ec);
  if (ec) return invalid_argument("--host: '" + options.host + "' is not an IP address");
  auto access =
      AccessPolicy::create(options.allow_origins, options.allow_hosts, host_form(unmapped(address)));
  if (!access) return access.error();
  auto impl = std::make_unique<Impl>(model, std::move(defaults), std::move(options));
  Impl& s = *impl;
  s.access = std::move(*access);
  auto simuleval_options = s.engine.resolve(StreamOptions{}, /*continuous_default=*/false);
  if (!simuleval_options) return simuleval_options.error();
  s.simuleval = std::make_unique<SimulEvalAgent>(s.engine, *simuleval_options);

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
