// One /v1/stream WebSocket connection: client messages → engine commands, engine events → JSON
// frames. Every client mistake ends this stream only (an error event, then a close code); the
// engine stream is closed whenever the connection goes away, however it goes. With a speech model the
// stream takes audio: binary frames of PCM go through AudioUnits (resampling, log-mel, the speech encoder,
// on this connection's network thread) and reach the engine as one source unit per encoder chunk.
#include "serve/server_impl.h"
#include "audio/log_mel.h"
#include "serve/stream_protocol.h"

namespace gpstream::serve {
namespace {

std::string event_json(const StreamEvent& e) {
  switch (e.kind) {
    case StreamEventKind::Word:
      return "{\"type\": \"word\", \"word\": " + json_string(e.word) + ", \"segment\": " + std::to_string(e.segment) +
             ", \"index\": " + std::to_string(e.index) + ", \"delay\": " + std::to_string(e.delay) +
             (e.audio ? ", \"delay_ms\": " + json_ms(e.delay_ms) : std::string()) + ", \"elapsed_ms\": " + json_ms(e.elapsed_ms) + ", \"lag_ms\": " + json_ms(e.lag_ms) +
             ", \"t_ms\": " + json_ms(e.t_ms) + "}";
    case StreamEventKind::SegmentEnd:
      return "{\"type\": \"segment_end\", \"segment\": " + std::to_string(e.segment) + ", \"words\": " +
             std::to_string(e.index) + ", \"truncated\": " + (e.truncated ? "true" : "false") + ", \"t_ms\": " +
             json_ms(e.t_ms) + "}";
    case StreamEventKind::Finished:
      return "{\"type\": \"finished\", \"segment\": " + std::to_string(e.segment) + ", \"words\": " +
             std::to_string(e.index) + ", \"truncated\": " + (e.truncated ? "true" : "false") + ", \"t_ms\": " +
             json_ms(e.t_ms) + "}";
    case StreamEventKind::Error:
      return error_event(e.error_code, e.error_message);
    case StreamEventKind::Idle:
      break;
  }
  return {};
}

websocket::close_code close_code_for(const std::string& error_code) {
  if (error_code == "shutdown") return websocket::close_code::going_away;
  if (error_code == "engine_error") return websocket::close_code::internal_error;
  return websocket::close_code::policy_error;
}

class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(tcp::socket socket, Server::Impl& server)
      : ws_(std::move(socket)), srv_(server), idle_timer_(ws_.get_executor()) {}

  ~WebSocketSession() {
    if (stream_) srv_.engine.close(stream_);
  }

  void run(http::request<http::string_body> req) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "gpstream"); }));
    ws_.read_message_max(srv_.opts.max_message_bytes);
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
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
      if (ec == websocket::error::message_too_big) ++srv_.metrics.ws_protocol_errors;  // Beast closes with 1009
      gone();
      return;
    }
    if (state_ == State::Closing) return;
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
    if (!msg) return protocol_error("bad_message", msg.error().message(), websocket::close_code::policy_error);
    if (std::holds_alternative<StartMessage>(*msg)) {
      if (state_ != State::AwaitStart) return protocol_error("protocol", "the stream has already started", websocket::close_code::policy_error);
      const StartMessage& start = std::get<StartMessage>(*msg);
      auto resolved = srv_.engine.resolve(start.options, /*continuous_default=*/true);
      if (!resolved) return protocol_error("bad_options", resolved.error().message(), websocket::close_code::policy_error);
      if (const audio::SpeechEncoderModel* encoder = srv_.engine.speech_encoder()) {
        format_ = start.audio.format.value_or(PcmFormat::F32LE);
        sample_rate_ = start.audio.sample_rate.value_or(audio::kLogMelSampleRate);
        auto units = AudioUnits::create(*encoder, sample_rate_);
        if (!units) return protocol_error("bad_options", units.error().message(), websocket::close_code::policy_error);
        audio_ = std::make_unique<AudioUnits>(std::move(*units));
        resolved->audio = true;
      } else if (start.audio.any()) {
        return protocol_error("bad_options",
                              "'audio_format' and 'sample_rate' need a speech model; this server's model takes text",
                              websocket::close_code::policy_error);
      }
      std::weak_ptr<WebSocketSession> weak = shared_from_this();
      auto ex = ws_.get_executor();
      auto id = srv_.engine.open(*resolved, [weak, ex](const StreamEvent& e) {
        if (e.kind == StreamEventKind::Idle) return;
        net::post(ex, [weak, e] {
          if (auto self = weak.lock()) self->on_stream_event(e);
        });
      });
      if (!id) {
        ++srv_.metrics.ws_protocol_errors;
        return protocol_error("busy", id.error().message(), websocket::close_code::try_again_later);
      }
      stream_ = *id;
      state_ = State::Streaming;
      const auto& so = resolved->session;
      send("{\"type\": \"ready\", \"session\": " + std::to_string(stream_) + ", \"k\": " + std::to_string(so.k) +
           ", \"paradigm\": " + json_string(stream::paradigm_name(so.paradigm)) + ", \"phi\": " +
           json_string(so.phi.to_string()) + ", \"source_lang\": " + json_string(resolved->source_lang) +
           ", \"target_lang\": " + json_string(resolved->target_lang) + ", \"continuous\": " +
           (so.continuous ? "true" : "false") + ", \"end_after_source\": " +
           (so.end_after_source ? "true" : "false") + ", \"beam\": " + std::to_string(so.beam) +
           (audio_ ? ", \"input\": \"audio\", \"audio_format\": " + json_string(pcm_format_name(format_)) +
                         ", \"sample_rate\": " + std::to_string(sample_rate_) + ", \"chunk_ms\": " +
                         json_ms(audio_->chunk_ms())
                   : std::string(", \"input\": \"text\"")) +
           "}");
      return;
    }
    if (state_ != State::Streaming)
      return protocol_error("protocol", state_ == State::AwaitStart ? "send a start message first" : "the source has already ended",
                            websocket::close_code::policy_error);
    if (auto* src = std::get_if<SourceMessage>(&*msg)) {
      if (audio_)
        return protocol_error("audio_expected",
                              std::string("this stream takes audio: send ") + pcm_format_name(format_) + " PCM at " +
                                  std::to_string(sample_rate_) + " Hz as binary frames, not source text",
                              websocket::close_code::unknown_data);
      srv_.engine.push(stream_, std::move(src->text));
      return;
    }
    if (audio_) {
      std::vector<AudioUnit> units;
      audio_->finish(units);
      if (!units.empty()) srv_.engine.push_audio(stream_, std::move(units));
    }
    srv_.engine.end(stream_);
    state_ = State::Ended;
    idle_timer_.cancel();  // the client has said everything; the translation may take its time
  }

  // A binary frame: PCM samples of an audio stream.
  void handle_binary(const std::string& bytes) {
    if (state_ == State::AwaitStart && srv_.engine.speech_encoder() == nullptr)
      return protocol_error("binary_frame",
                            "only text frames (JSON) are accepted: this server's model takes text (audio needs a speech "
                            "model)",
                            websocket::close_code::unknown_data);
    if (state_ != State::Streaming)
      return protocol_error("protocol", state_ == State::AwaitStart ? "send a start message first" : "the source has already ended",
                            websocket::close_code::policy_error);
    if (!audio_)
      return protocol_error("binary_frame", "this stream takes text (JSON source messages), not binary frames",
                            websocket::close_code::unknown_data);
    auto samples = decode_pcm(std::as_bytes(std::span(bytes.data(), bytes.size())), format_);
    if (!samples) return protocol_error("bad_audio", samples.error().message(), websocket::close_code::bad_payload);
    std::vector<AudioUnit> units;
    audio_->push(*samples, units);
    if (!units.empty()) srv_.engine.push_audio(stream_, std::move(units));
  }

  void on_stream_event(const StreamEvent& e) {
    if (state_ == State::Closing) return;
    send(event_json(e));
    if (e.kind == StreamEventKind::Finished) {
      stream_ = 0;
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
      state_ = State::Closing;
      release_stream();
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
      return;
    }
    queue_.push_back(Frame{std::move(frame), false, {}});
    write();
  }

  void close(websocket::close_code code, const std::string& reason) {
    if (state_ == State::Closing) return;
    state_ = State::Closing;
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
    idle_timer_.async_wait([weak = std::weak_ptr<WebSocketSession>(shared_from_this())](beast::error_code ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      if (self->state_ == State::AwaitStart || self->state_ == State::Streaming)
        self->protocol_error("idle_timeout", "no message for " + std::to_string(static_cast<int64_t>(self->srv_.opts.idle_timeout_ms)) + " ms",
                             websocket::close_code::policy_error);
    });
  }

  void release_stream() {
    if (stream_) srv_.engine.close(stream_);
    stream_ = 0;
  }

  // The connection is over (closed, reset, or failed): free the stream.
  void gone() {
    state_ = State::Closing;
    idle_timer_.cancel();
    release_stream();
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
  std::unique_ptr<AudioUnits> audio_;  // audio streams only
  PcmFormat format_ = PcmFormat::F32LE;
  uint32_t sample_rate_ = 0;
};

}  // namespace

void start_websocket_session(tcp::socket socket, http::request<http::string_body> request, Server::Impl& server) {
  std::make_shared<WebSocketSession>(std::move(socket), server)->run(std::move(request));
}

}  // namespace gpstream::serve
