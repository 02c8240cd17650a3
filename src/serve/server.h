// gpstream's HTTP + WebSocket server (Boost.Beast): the /v1/stream WebSocket API, POST /v1/translate,
// GET /health, GET /metrics, SimulEval's remote-agent endpoints and the web demo, all over one Engine
// that batches every stream's forward. With a speech model, WebSocket streams take audio. Thin by design: it
// parses, enforces limits and hands work to the engine; it never decodes. The protocol is documented in
// docs/server.md.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "serve/api_keys.h"
#include "serve/engine.h"
#include "serve/request_log.h"

namespace gpstream::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";  // localhost by default
  int port = 8080;                 // 0: any free port (see Server::port())
  int io_threads = 1;
  std::string web_root;  // folder of the demo page ("" = no demo)
  EngineLimits engine;
  size_t max_message_bytes = 64 << 10;  // one WebSocket message
  size_t max_body_bytes = 1 << 20;      // one HTTP request body
  size_t max_translate_lines = 256;     // lines in one POST /v1/translate
  size_t max_queued_events = 4096;      // per WebSocket: events not yet sent (a client that does not read)
  double idle_timeout_ms = 60000;       // a WebSocket stream (and the SimulEval stream) with no message
  double http_timeout_ms = 30000;       // reading one HTTP request
  // TCP connections served at once (0: default_max_connections(), below the descriptor limit); past it a
  // connection gets 503 with Retry-After and is closed (connection_limit.h).
  int max_connections = 0;
  // The request log (request_log.h): one JSON line per connection, request and stream; null: none.
  std::shared_ptr<RequestLog> request_log;
  // Who may connect (access_policy.h): browser origins besides the server's own ("*": any origin), and Host
  // names besides the address a connection arrives on (with the loopback names for a loopback address).
  std::vector<std::string> allow_origins;
  std::vector<std::string> allow_hosts;
  // A speech model's encoder (speech/speech_model.h; must outlive the server): WebSocket streams then take
  // audio (binary PCM frames) instead of text. Its llm_hidden must be the model's n_embd, its n_mels 80.
  const speech_encoder::SpeechEncoderModel* speech_encoder = nullptr;
  // API keys (--api-key-file; api_keys.h): when set, every endpoint but GET /health, CORS preflights and
  // the demo page's files needs one of them (401 otherwise).
  std::shared_ptr<const ApiKeys> api_keys;
  // Streams one client (its key, else its address) may hold at once: WebSocket connections and POST
  // /v1/translate requests in flight (429 past it). Capped at engine.max_sessions; at that cap it adds
  // nothing and the server's own limit (busy) applies.
  int max_sessions_per_client = 16;
};

class Server {
 public:
  // Binds and starts serving (engine thread + io threads). `model` must outlive the server.
  static Result<std::unique_ptr<Server>> start(stream::StreamingModel& model, stream::SessionOptions defaults,
                                               ServerOptions options);
  ~Server();  // stop()

  int port() const;
  // Stops accepting, closes every connection and stream, joins the threads. Idempotent.
  void stop();
  // Blocks until request_stop() is called or, after stop_on_signals(), SIGINT/SIGTERM arrive; then
  // the caller runs stop().
  void wait();
  void request_stop();
  // After stop_on_signals(), the first SIGINT/SIGTERM calls request_stop() and a second one cuts a drain()
  // short.
  void stop_on_signals();
  // Graceful shutdown, before stop(): new connections and HTTP requests get 503 "draining"; every open
  // WebSocket stream's source is ended as if the client had sent "end", its last words are sent, and it is
  // closed with 1001 (going away); streams that have not started are closed at once. Returns true when every
  // stream and pending HTTP reply was done within `timeout` (false: stop() ends the rest).
  bool drain(std::chrono::milliseconds timeout);
  // TCP connections being served now, and the limit in force.
  int open_connections() const;
  int max_connections() const;

  const Metrics& metrics() const;
  int open_sessions() const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpstream::serve
