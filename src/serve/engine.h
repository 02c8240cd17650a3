// Engine: the one thread that owns every live stream::Session and steps them all together with a
// stream::Scheduler (one batched forward per round). Network threads talk to it only through
// thread-safe calls (open, push, end, close) that queue commands; it answers through each stream's
// sink, called on the engine thread. It enforces the per-stream limits (backlog of unread source words,
// sentence size against the KV cache) so that one stream's input can never fail another's forward.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/metrics.h"
#include "serve/stream_protocol.h"
#include "serve/word_buffer.h"
#include "stream/scheduler.h"
#include "stream/streaming_model.h"

namespace gpstream::serve {

struct EngineLimits {
  int max_sessions = 64;
  int max_backlog_words = 4096;  // per stream: words received but not yet in a finished sentence
  int max_pending_bytes = 4096;  // per stream: an unfinished word held back (no whitespace yet)
  int max_language_pairs = 16;   // distinct (source, target) codecs kept
};

enum class StreamEventKind { Word, Idle, SegmentEnd, Finished, Error };

// What a stream's sink receives, on the engine thread. After Finished or Error the stream is gone.
struct StreamEvent {
  StreamEventKind kind = StreamEventKind::Idle;
  std::string word;          // Word
  int index = 0;             // Word: index in its segment; SegmentEnd: words in the segment
  int segment = 0;           // Word, SegmentEnd: sentence number (continuous streams), from 0
  int delay = 0;             // Word: source words of its segment read when it was written
  double elapsed_ms = 0;     // Word: since the segment's first source word arrived (Session clock)
  double lag_ms = 0;         // Word: since the arrival of the last source it read
  double t_ms = 0;           // any: since the stream was opened
  bool truncated = false;    // SegmentEnd/Finished: stopped by the target length limit
  int64_t inputs_applied = 0;  // Idle: push/end commands applied so far (SimulEval waits on this)
  std::string error_code, error_message;  // Error
};

using StreamSink = std::function<void(const StreamEvent&)>;

// The effective settings of a stream, after defaults.
struct ResolvedOptions {
  stream::SessionOptions session;
  std::string source_lang, target_lang;
};

class Engine {
 public:
  Engine(stream::StreamingModel& model, stream::SessionOptions defaults, EngineLimits limits, Metrics& metrics);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts/stops the engine thread; stop() ends every open stream (sinks get an Error "shutdown").
  void start();
  void stop();

  // Settings a stream with these options would get (errors: bad language pair, bad options).
  Result<ResolvedOptions> resolve(const StreamOptions& options, bool continuous_default) const;
  // Opens a stream. Fails at once when max_sessions are open. Words are pushed with push().
  Result<uint64_t> open(const ResolvedOptions& options, StreamSink sink);
  // A chunk of source text (partial words allowed). Ignored for an unknown or closed id.
  void push(uint64_t id, std::string text);
  // End of source: the held-back partial word becomes a word, then the end marker.
  void end(uint64_t id);
  // Abandons a stream (client gone). Its sink is never called again after close() returns... unless
  // an event is already being delivered; sinks must tolerate a late call.
  void close(uint64_t id);

  int open_sessions() const;
  const stream::StreamingModel& model() const { return model_; }
  const stream::SessionOptions& defaults() const { return defaults_; }

 private:
  struct Stream;
  struct Command {
    enum class Kind { Open, Push, End, Close } kind;
    uint64_t id = 0;
    std::string text;
    double at_ms = 0;
    std::unique_ptr<Stream> stream;  // Open
  };

  void run();
  void apply(Command& c);
  void push_words(Stream& s, std::vector<std::string> words, double at_ms);
  void fail(Stream& s, const std::string& code, const std::string& message);
  void on_event(Stream& s, const stream::Event& e);
  void retire_finished();
  Result<const stream::SegmentCodec*> codec_for(const std::string& src, const std::string& tgt) const;
  void enqueue(Command c);

  stream::StreamingModel& model_;
  stream::SessionOptions defaults_;
  EngineLimits limits_;
  Metrics& metrics_;
  int max_sentence_tokens_ = 0;  // source tokens one sentence may need, from the cache capacity

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool running_ = false;
  int reserved_ = 0;  // streams opened and not yet retired (counted at open() for the limit)
  uint64_t next_id_ = 1;
  mutable std::map<std::pair<std::string, std::string>, std::unique_ptr<stream::TokenizerCodec>> codecs_;
  std::thread thread_;

  // Engine thread only.
  stream::Scheduler scheduler_;
  std::map<uint64_t, std::unique_ptr<Stream>> streams_;
  std::map<int, Stream*> by_handle_;
  double rate_window_start_ = 0;
  int64_t rate_window_tokens_ = 0;
};

double steady_now_ms();

}  // namespace gpstream::serve
