// `gpstream serve -m MODEL [--host 127.0.0.1] [--port N] [--max-sessions N] [--threads N] ...`: serves
// live streams over WebSocket, whole texts over HTTP, SimulEval's remote-agent protocol and the web
// demo (docs/server.md). Stream defaults (k, paradigm, φ, decoding) come from the model's gpstream.json
// and the usual streaming options, so a stream is translated exactly as `gpstream translate` would. A speech
// model directory (speech/speech_model.h) makes WebSocket streams take audio (docs/server.md).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/install_paths.h"
#include "serve/access_policy.h"
#include "serve/api_keys.h"
#include "serve/connection_limit.h"
#include "serve/server.h"
#include "speech/speech_model.h"

namespace gpstream::cli {
namespace {

int run_serve(int argc, char** argv) {
  CLI::App app{
      "Serve live streams: WebSocket /v1/stream, POST /v1/translate, SimulEval remote agent, web demo",
      "gpstream serve"};
  StreamCli o;
  serve::ServerOptions so;
  so.web_root = web_dir();  // PREFIX/share/gpstream/web, or the build tree's copy
  int k = 0;
  double idle_s = so.idle_timeout_ms / 1000;
  add_stream_options(app, o);
  app.add_option("-k,--wait-k", k, "default wait-k lag (default: the model's)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--host", so.host, "address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", so.port, "TCP port (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--max-sessions", so.engine.max_sessions, "streams open at once at most")
      ->check(CLI::Range(1, 100000));
  app.add_option("--io-threads", so.io_threads, "network threads")->check(CLI::Range(1, 64));
  app.add_option("--web", so.web_root, "folder of the demo page (\"\" to disable)");
  // Checked here so that a bad value is a usage error (exit 2); Server::start checks them again.
  const auto allow_origin = CLI::Validator(
      [](std::string& v) {
        auto r = serve::parse_allow_origin(v);
        return r ? std::string() : r.error().message();
      },
      "ORIGIN");
  const auto allow_host = CLI::Validator(
      [](std::string& v) {
        auto r = serve::parse_allow_host(v);
        return r ? std::string() : r.error().message();
      },
      "NAME");
  app.add_option("--allow-origin", so.allow_origins,
                 "browser origin (scheme://host[:port]) that may use the server; repeatable; '*': any "
                 "(default: none but the server's own; requests without Origin, as from SimulEval or curl, "
                 "pass; others get 403)")
      ->check(allow_origin);
  app.add_option("--allow-host", so.allow_hosts,
                 "Host name the server answers to; repeatable; '*': any (default: the listening address, and "
                 "localhost, 127.0.0.1, [::1] when it is loopback; others get 421)")
      ->check(allow_host);
  std::string api_key_file;
  bool insecure = false;
  app.add_option("--api-key-file", api_key_file,
                 "file of API keys, one per line ('#' comments); every endpoint but /health and the demo "
                 "page's files then needs one (Authorization: Bearer KEY, or ?key=KEY; 401 otherwise)");
  app.add_flag("--insecure", insecure,
               "allow a non-loopback --host without --api-key-file (anyone who can reach the port may use "
               "the server)");
  auto* per_client =
      app.add_option("--max-sessions-per-client", so.max_sessions_per_client,
                     "streams one client (its API key, else its address) may hold at once; at most "
                     "--max-sessions (default: 16 or --max-sessions if lower; 429 past it)")
          ->check(CLI::Range(1, 100000));
  app.add_option("--idle-timeout", idle_s, "seconds a stream may stay silent before it is closed")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--max-connections", so.max_connections,
                 "TCP connections served at once; past it a connection gets 503 and is closed (default: "
                 "min(512, the descriptor limit - 48), here " +
                     std::to_string(serve::default_max_connections()) + ")")
      ->check(CLI::Range(1, 1000000));
  double drain_s = 10;
  app.add_option("--drain-seconds", drain_s,
                 "on SIGTERM/SIGINT: seconds open streams get to finish (their source ended, last words "
                 "sent, then close 1001) before the server stops; a second signal stops at once")
      ->check(CLI::Range(0.0, 3600.0));
  std::string log_file;
  bool log_text = false, no_request_log = false;
  app.add_option("--log-file", log_file,
                 "append the request log (JSON lines) to this file instead of stderr");
  app.add_flag("--log-text", log_text,
               "put the text of requests and streams, and their translations, in the request log");
  app.add_flag("--no-request-log", no_request_log, "write no request log");
  app.add_option("--max-message-bytes", so.max_message_bytes, "largest WebSocket message")
      ->check(CLI::Range(64, 1 << 24));
  app.add_option("--max-backlog-words", so.engine.max_backlog_words,
                 "source words waiting per stream at most")
      ->check(CLI::Range(1, 1 << 24));
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  so.idle_timeout_ms = idle_s * 1000;
  if (per_client->count() && so.max_sessions_per_client > so.engine.max_sessions) {
    std::fprintf(stderr, "gpstream serve: --max-sessions-per-client %d is more than --max-sessions %d\n",
                 so.max_sessions_per_client, so.engine.max_sessions);
    return kExitUsage;
  }
  if (!serve::is_loopback_host(so.host) && api_key_file.empty() && !insecure) {
    std::fprintf(stderr,
                 "gpstream serve: --host %s is reachable from other machines: add --api-key-file PATH so "
                 "that clients need a key, or --insecure to serve anyone who can reach it\n",
                 so.host.c_str());
    return kExitUsage;
  }
  if (!api_key_file.empty()) {
    auto keys = serve::ApiKeys::load(api_key_file);
    if (!keys) {
      std::fprintf(stderr, "gpstream serve: --api-key-file: %s\n", keys.error().message().c_str());
      return kExitUsage;
    }
    so.api_keys = std::make_shared<const serve::ApiKeys>(std::move(*keys));
  }

  if (!no_request_log) {
    if (log_file.empty()) {
      so.request_log = serve::RequestLog::to_stderr(log_text);
    } else {
      auto log = serve::RequestLog::open_file(log_file, log_text);
      if (!log) return fail("serve", log.error());
      so.request_log = std::move(*log);
    }
  }

  auto m = load_stream_model(o);
  if (!m) return fail("serve", m.error());
  auto defaults = session_options(o, *m, k, o.paradigm);
  if (!defaults)
    return std::fprintf(stderr, "gpstream serve: %s\n", defaults.error().message().c_str()), kExitUsage;
  // A speech model directory (speech_encoder.safetensors beside the LLM): WebSocket streams take audio.
  std::unique_ptr<speech_encoder::SpeechEncoderModel> encoder;
  if (speech::is_speech_model_dir(o.model)) {
    auto enc = speech_encoder::SpeechEncoderModel::load(
        (std::filesystem::path(o.model) / speech::kSpeechEncoderFile).string());
    if (!enc) return fail("serve", enc.error());
    encoder = std::make_unique<speech_encoder::SpeechEncoderModel>(std::move(*enc));
    so.speech_encoder = encoder.get();
  }
  auto server = serve::Server::start(*m, *defaults, so);
  if (!server) return fail("serve", server.error());
  (*server)->stop_on_signals();
  std::fprintf(stderr, "gpstream serve: listening on http://%s:%d (WebSocket /v1/stream%s%s; Ctrl-C stops)\n",
               so.host.c_str(), (*server)->port(), encoder ? ", audio streams" : "",
               so.api_keys ? ", API keys required" : "");
  std::printf("%d\n", (*server)->port());
  std::fflush(stdout);
  (*server)->wait();
  // Draining: new connections get 503, open streams finish what they were sent (a second signal cuts it
  // short).
  std::fprintf(stderr, "gpstream serve: draining (up to %g s; a second signal stops at once)\n", drain_s);
  const bool drained = (*server)->drain(std::chrono::milliseconds(static_cast<int64_t>(drain_s * 1000)));
  std::fprintf(stderr, "gpstream serve: stopping%s\n", drained ? "" : " (streams still open are ended)");
  (*server)->stop();
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("serve", "serve live streams over WebSocket/HTTP (SimulEval remote agent, web demo)",
                 "gpstream serve -m models/gpstream-en-fr --port 9000 --max-sessions 16",
                 gpstream::cli::run_serve);
