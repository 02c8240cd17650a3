// One /v1/stream WebSocket connection: client messages → engine commands, engine events → JSON
// frames. Every client mistake ends this stream only (an error event, then a close code); the
// engine stream is closed whenever the connection goes away, however it goes. With a speech model the
// stream takes audio: binary frames of PCM are decoded into samples here and queued to the engine, whose
// thread runs the stream's AudioUnits (resampling, log-mel, the speech encoder): no encoding on the
// network threads.
#include "audio/log_mel.h"
#include "serve/server_impl.h"
#include "serve/stream_protocol.h"

namespace gpstream::serve {
namespace {

using nlohmann::ordered_json;

std::string event_json(const StreamEvent& e) {
  switch (e.kind) {
    case StreamEventKind::Word: {
      ordered_json word = {
          {"type", "word"}, {"word", e.word}, {"segment", e.segment}, {"index", e.index}, {"delay", e.delay}};
      if (e.audio) word["delay_ms"] = ms_value(e.delay_ms);
      word["elapsed_ms"] = ms_value(e.elapsed_ms);
      word["lag_ms"] = ms_value(e.lag_ms);
      word["t_ms"] = ms_value(e.t_ms);
      return reply_text(word);
    }
    case StreamEventKind::SegmentEnd:
    case StreamEventKind::Finished:
      return reply_text({{"type", e.kind == StreamEventKind::Finished ? "finished" : "segment_end"},
                         {"segment", e.segment},
                         {"words", e.index},
                         {"truncated", e.truncated},
                         {"t_ms", ms_value(e.t_ms)}});
    case StreamEventKind::Tentative:
      return reply_text(
          {{"type", "tentative"}, {"segment", e.segment}, {"words", e.words}, {"t_ms", ms_value(e.t_ms)}});
    case StreamEventKind::Error:
      return error_event(e.error_code, e.error_message);
    case StreamEventKind::Idle:
      break;
  }
  return {};
}

// Counts the whitespace-separated words of `text`, a chunk of a stream whose previous chunk may have ended
// inside a word (`in_word` carries that over).
int count_new_words(std::string_view text, bool& in_word) {
  int words = 0;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

websocket::close_code close_code_for(const std::string& error_code) {
  if (error_code == "shutdown") return websocket::close_code::going_away;
  if (error_code == "engine_error") return websocket::close_code::internal_error;
  return websocket::close_code::policy_error;
}

class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(tcp::socket socket, Server::Impl& server, ClientQuota::Lease quota_slot,
                   Connection connection)
      : ws_(std::move(socket)),
        srv_(server),
        idle_timer_(ws_.get_executor()),
        quota_slot_(std::move(quota_slot)),
        conn_(std::move(connection)),
        opened_ms_(steady_now_ms()) {}

  ~WebSocketSession() {
    if (stream_) srv_.engine.close(stream_);
    srv_.remove_drain_hook(conn_.id);
    log_close();
  }

  void run(http::request<http::string_body> req) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "gpstream"); }));
    ws_.read_message_max(srv_.opts.max_message_bytes);
    std::weak_ptr<WebSocketSession> weak = shared_from_this();
    srv_.add_drain_hook(conn_.id, [weak, ex = ws_.get_executor()] {
      net::post(ex, [weak] {
        if (auto self = weak.lock()) self->begin_drain();
      });
    });
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->accepted_ = true;
      if (self->drain_requested_) self->apply_drain();
      if (self->state_ == State::Closing) return;
      self->arm_idle_timer();
      self->read();
    });
  }

 private:
  enum class State { AwaitStart, Streaming, Ended, Closing };

  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      if (ec == websocket::error::message_too_big)
        ++srv_.metrics.ws_protocol_errors;  // Beast closes with 1009
      gone();
      return;
    }
    if (state_ == State::Closing) return;
    bytes_in_ += buffer_.size();
    arm_idle_timer();
    if (!ws_.got_text()) {
      std::string bytes = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      handle_binary(bytes);
    } else {
      std::string text = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      handle(text);
    }
    if (state_ != State::Closing) read();
  }

  void handle(const std::string& text) {
    auto msg = parse_client_message(text);
    if (!msg)
      return protocol_error("bad_message", msg.error().message(), websocket::close_code::policy_error);
    if (drained_ && state_ != State::AwaitStart) return;  // sent after the drain ended the source: dropped
    if (std::holds_alternative<StartMessage>(*msg)) {
      if (state_ != State::AwaitStart)
        return protocol_error("protocol", "the stream has already started",
                              websocket::close_code::policy_error);
      const StartMessage& start = std::get<StartMessage>(*msg);
      auto resolved = srv_.engine.resolve(start.options, /*continuous_default=*/true);
      if (!resolved)
        return protocol_error("bad_options", resolved.error().message(), websocket::close_code::policy_error);
      std::unique_ptr<AudioUnits> audio_units;
      if (const speech_encoder::SpeechEncoderModel* encoder = srv_.engine.speech_encoder()) {
        format_ = start.audio.format.value_or(PcmFormat::F32LE);
        sample_rate_ = start.audio.sample_rate.value_or(audio::kLogMelSampleRate);
        // Continuous streams take audio of any length, cut at pauses; otherwise the stream is one utterance.
        auto units = AudioUnits::create(*encoder, sample_rate_, resolved->session.continuous);
        if (!units)
          return protocol_error("bad_options", units.error().message(), websocket::close_code::policy_error);
        audio_units = std::make_unique<AudioUnits>(std::move(*units));
        audio_ = true;
        chunk_ms_ = audio_units->chunk_ms();
        resolved->audio = true;
      } else if (start.audio.any()) {
        return protocol_error(
            "bad_options",
            "'audio_format' and 'sample_rate' need a speech model; this server's model takes text",
            websocket::close_code::policy_error);
      }
      std::weak_ptr<WebSocketSession> weak = shared_from_this();
      auto ex = ws_.get_executor();
      auto id = srv_.engine.open(
          *resolved,
          [weak, ex](const StreamEvent& e) {
            if (e.kind == StreamEventKind::Idle) return;
            net::post(ex, [weak, e] {
              if (auto self = weak.lock()) self->on_stream_event(e);
            });
          },
          std::move(audio_units));
      if (!id) {
        ++srv_.metrics.ws_protocol_errors;
        return protocol_error("busy", id.error().message(), websocket::close_code::try_again_later);
      }
      stream_ = *id;
      state_ = State::Streaming;
      const auto& so = resolved->session;
      logged_stream_ = stream_;
      ordered_json ready = {{"type", "ready"},
                            {"session", stream_},
                            {"k", so.k},
                            {"paradigm", stream::paradigm_name(so.paradigm)},
                            {"phi", so.phi.to_string()},
                            {"source_lang", resolved->source_lang},
                            {"target_lang", resolved->target_lang},
                            {"continuous", so.continuous},
                            {"end_after_source", so.end_after_source},
                            {"beam", so.beam}};
      ready["policy"] = ordered_json::parse(stream::policy_json(so.policy));
      if (audio_) {
        ready["input"] = "audio";
        ready["audio_format"] = pcm_format_name(format_);
        ready["sample_rate"] = sample_rate_;
        ready["chunk_ms"] = ms_value(chunk_ms_);
      } else {
        ready["input"] = "text";
      }
      send(reply_text(ready));
      srv_.log("open", {{"connection", conn_.id},
                        {"client", conn_.client},
                        {"stream", stream_},
                        {"input", audio_ ? "audio" : "text"}});
      return;
    }
    if (state_ != State::Streaming)
      return protocol_error(
          "protocol",
          state_ == State::AwaitStart ? "send a start message first" : "the source has already ended",
          websocket::close_code::policy_error);
    if (auto* src = std::get_if<SourceMessage>(&*msg)) {
      if (audio_)
        return protocol_error("audio_expected",
                              std::string("this stream takes audio: send ") + pcm_format_name(format_) +
                                  " PCM at " + std::to_string(sample_rate_) +
                                  " Hz as binary frames, not source text",
                              websocket::close_code::unknown_data);
      source_words_ += count_new_words(src->text, in_source_word_);
      if (srv_.log_text()) source_cut_ |= !keep_for_log(source_text_, src->text);
      srv_.engine.push(stream_, std::move(src->text));
      return;
    }
    end_source();
  }

  // End of source (the client's "end", or a drain); for audio, the engine encodes what it holds back as
  // the last chunk.
  void end_source() {
    srv_.engine.end(stream_);
    state_ = State::Ended;
    idle_timer_.cancel();  // the client has said everything; the translation may take its time
  }

  // Server::drain() (on this connection's strand): remembered until the handshake is done.
  void begin_drain() {
    drain_requested_ = true;
    if (accepted_) apply_drain();
  }

  // A stream that has started is ended as if the client had sent "end" (its last words still come, then
  // 1001); one that has not is closed now.
  void apply_drain() {
    if (drained_) return;
    drained_ = true;
    if (state_ == State::AwaitStart) {
      send(error_event("draining", "the server is shutting down"));
      close(websocket::close_code::going_away, "draining");
    } else if (state_ == State::Streaming) {
      end_source();
    }
  }

  // A binary frame: PCM samples of an audio stream.
  void handle_binary(const std::string& bytes) {
    if (drained_ && state_ != State::AwaitStart) return;  // audio after the drain ended the source: dropped
    if (state_ == State::AwaitStart && srv_.engine.speech_encoder() == nullptr)
      return protocol_error(
          "binary_frame",
          "only text frames (JSON) are accepted: this server's model takes text (audio needs a speech "
          "model)",
          websocket::close_code::unknown_data);
    if (state_ != State::Streaming)
      return protocol_error(
          "protocol",
          state_ == State::AwaitStart ? "send a start message first" : "the source has already ended",
          websocket::close_code::policy_error);
    if (!audio_)
      return protocol_error("binary_frame",
                            "this stream takes text (JSON source messages), not binary frames",
                            websocket::close_code::unknown_data);
    auto samples = decode_pcm(std::as_bytes(std::span(bytes.data(), bytes.size())), format_);
    if (!samples)
      return protocol_error("bad_audio", samples.error().message(), websocket::close_code::bad_payload);
    srv_.engine.push_audio(stream_, std::move(*samples));
  }

  void on_stream_event(const StreamEvent& e) {
    if (state_ == State::Closing) return;
    send(event_json(e));
    if (e.kind == StreamEventKind::Word) {
      ++target_words_;
      if (srv_.log_text())
        translation_cut_ |= !keep_for_log(translation_, target_words_ > 1 ? " " + e.word : e.word);
    }
    if (e.kind == StreamEventKind::Finished) {
      stream_ = 0;
      if (drained_)
        close(websocket::close_code::going_away, "draining");
      else
        close(websocket::close_code::normal, "finished");
    } else if (e.kind == StreamEventKind::Error) {
      stream_ = 0;
      close(close_code_for(e.error_code), e.error_code);
    }
  }

  void protocol_error(const std::string& code, const std::string& message, websocket::close_code close_code) {
    ++srv_.metrics.ws_protocol_errors;
    send(error_event(code, message));
    close(close_code, code);
  }

  void send(std::string frame) {
    if (state_ == State::Closing) return;
    if (queue_.size() >= srv_.opts.max_queued_events) {  // the client does not read: drop it
      ++srv_.metrics.ws_protocol_errors;
      outcome_ = "not_reading";
      state_ = State::Closing;
      release_stream();
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
      return;
    }
    bytes_out_ += frame.size();
    queue_.push_back(Frame{std::move(frame), false, {}});
    write();
  }

  void close(websocket::close_code code, const std::string& reason) {
    if (state_ == State::Closing) return;
    state_ = State::Closing;
    outcome_ = reason;
    close_code_ = static_cast<int>(code);
    idle_timer_.cancel();
    release_stream();
    queue_.push_back(Frame{{}, true, websocket::close_reason(code, reason.substr(0, 100))});
    write();
  }

  void write() {
    if (writing_ || queue_.empty()) return;
    writing_ = true;
    Frame& f = queue_.front();
    if (f.close) {
      ws_.async_close(f.reason, [self = shared_from_this()](beast::error_code) {
        self->writing_ = false;
        self->queue_.clear();
      });
      return;
    }
    ws_.text(true);
    ws_.async_write(net::buffer(f.text), [self = shared_from_this()](beast::error_code ec, size_t) {
      self->writing_ = false;
      if (ec) {
        self->queue_.clear();
        self->gone();
        return;
      }
      self->queue_.pop_front();
      self->write();
    });
  }

  void arm_idle_timer() {
    if (state_ == State::Ended || state_ == State::Closing) return;
    idle_timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(srv_.opts.idle_timeout_ms)));
    idle_timer_.async_wait([weak =
                                std::weak_ptr<WebSocketSession>(shared_from_this())](beast::error_code ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      if (self->state_ == State::AwaitStart || self->state_ == State::Streaming)
        self->protocol_error(
            "idle_timeout",
            "no message for " + std::to_string(static_cast<int64_t>(self->srv_.opts.idle_timeout_ms)) + " ms",
            websocket::close_code::policy_error);
    });
  }

  // Frees the engine stream and the client's quota slot: the connection is ending.
  void release_stream() {
    if (stream_) srv_.engine.close(stream_);
    stream_ = 0;
    quota_slot_.reset();
  }

  // The connection is over (closed, reset, or failed): free the stream.
  void gone() {
    if (outcome_.empty()) outcome_ = "gone";
    state_ = State::Closing;
    idle_timer_.cancel();
    release_stream();
  }

  // The connection's log line, when it ends.
  void log_close() {
    if (!srv_.opts.request_log) return;
    ordered_json line = {{"connection", conn_.id}, {"client", conn_.client}};
    if (logged_stream_) line["stream"] = logged_stream_;
    line["outcome"] = outcome_.empty() ? (accepted_ ? "gone" : "handshake_failed") : outcome_;
    if (close_code_) line["close_code"] = close_code_;
    line["bytes_in"] = bytes_in_;
    line["bytes_out"] = bytes_out_;
    line["source_words"] = source_words_;
    line["target_words"] = target_words_;
    line["duration_ms"] = ms_value(steady_now_ms() - opened_ms_);
    if (srv_.log_text()) {
      line["text"] = source_text_;
      line["translation"] = translation_;
      if (source_cut_ || translation_cut_) line["text_cut"] = true;
    }
    srv_.log("close", line);
  }

  struct Frame {
    std::string text;
    bool close = false;
    websocket::close_reason reason;
  };

  websocket::stream<beast::tcp_stream> ws_;
  Server::Impl& srv_;
  net::steady_timer idle_timer_;
  beast::flat_buffer buffer_;
  std::deque<Frame> queue_;
  bool writing_ = false;
  State state_ = State::AwaitStart;
  uint64_t stream_ = 0;
  bool audio_ = false;             // the stream takes audio
  double chunk_ms_ = 0;            // audio streams: audio per encoder chunk
  ClientQuota::Lease quota_slot_;  // the client's slot, returned when the connection ends
  PcmFormat format_ = PcmFormat::F32LE;
  uint32_t sample_rate_ = 0;
  Connection conn_;               // its place under the connection limit, its name in the log
  bool accepted_ = false;         // the WebSocket handshake is done
  bool drain_requested_ = false;  // Server::drain() asked (applied once the handshake is done)
  bool drained_ = false;          // the drain has been applied: the source is over
  // For the log line (log_close).
  double opened_ms_ = 0;
  uint64_t logged_stream_ = 0;  // the engine stream's id (stream_ is cleared when it ends)
  std::string outcome_;         // "finished", "draining", an error code, "gone", "not_reading"
  int close_code_ = 0;          // the close code sent (0: none)
  size_t bytes_in_ = 0, bytes_out_ = 0;
  int64_t source_words_ = 0, target_words_ = 0;
  bool in_source_word_ = false;            // the last source chunk ended inside a word
  std::string source_text_, translation_;  // with --log-text, cut at kMaxLoggedTextBytes
  bool source_cut_ = false, translation_cut_ = false;
};

}  // namespace

void start_websocket_session(tcp::socket socket, http::request<http::string_body> request,
                             Server::Impl& server, ClientQuota::Lease quota_slot, Connection connection) {
  std::make_shared<WebSocketSession>(std::move(socket), server, std::move(quota_slot), std::move(connection))
      ->run(std::move(request));
}

}  // namespace gpstream::serve
