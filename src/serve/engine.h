// Engine: the one thread that owns every live stream::Session and steps them all together with a
// stream::Scheduler (one batched forward per round). Network threads talk to it only through
// thread-safe calls (open, push, end, close) that queue commands; it answers through each stream's
// sink, called on the engine thread. It enforces the per-stream limits (backlog of unread source words,
// sentence size against the KV cache) so that one stream's input can never fail another's forward.
// With a speech encoder (a speech model), a stream may take audio instead of text: push_audio() queues
// samples, and the engine thread turns them into source units (encoder chunks, serve/audio_units.h) a
// bounded slice per stream per round, so that one stream's long recording never holds up the others.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/audio_units.h"
#include "serve/deadline_schedule.h"
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
  // Per audio stream: audio received and not yet through the speech encoder (ms at the stream's rate).
  double max_unencoded_audio_ms = 180000;
  // Deadline scheduling (serve/deadline_schedule.h): the per-stream encoder slice and forward rows of a
  // round, and the smaller share of a stream that is ahead of real time.
  DeadlinePolicy deadline;
  // Memory all open streams' KV caches may take at their worst (stream::Session::worst_case_cache_bytes);
  // unset: util/memory_budget.h's budget (GPSTREAM_MEMORY_LIMIT, else the memory available), read at
  // each open.
  std::optional<uint64_t> memory_budget_bytes;
};

// Tentative: a local-agreement stream's tentative words after those written (stream::EventKind::Tentative).
enum class StreamEventKind { Word, Idle, SegmentEnd, Finished, Error, Tentative };

// What a stream's sink receives, on the engine thread. After Finished or Error the stream is gone.
struct StreamEvent {
  StreamEventKind kind = StreamEventKind::Idle;
  std::string word;                // Word
  std::vector<std::string> words;  // Tentative: the words, replacing the previous Tentative's
  int index = 0;                   // Word: index in its segment; SegmentEnd: words in the segment
  int segment = 0;        // Word, SegmentEnd, Tentative: sentence number (continuous streams), from 0
  int delay = 0;          // Word: source units (words, audio chunks) of its segment read when it was written
  double delay_ms = 0;    // Word: audio of those chunks (audio streams; 0 for text)
  bool audio = false;     // Word: the stream takes audio (delay_ms is meaningful)
  double elapsed_ms = 0;  // Word: since the segment's first source word arrived (Session clock)
  int stream_delay = 0;   // Word: like delay, counted from the stream's first source unit
  double stream_elapsed_ms = 0;  // Word: like elapsed_ms, since the stream's first source unit arrived
  double lag_ms = 0;             // Word: since the arrival of the last source it read
  double t_ms = 0;               // any: since the stream was opened
  bool truncated = false;        // SegmentEnd/Finished: stopped by the target length limit
  int64_t inputs_applied = 0;    // Idle: push/end commands applied so far (SimulEval waits on this)
  std::string error_code, error_message;  // Error
};

using StreamSink = std::function<void(const StreamEvent&)>;

// The effective settings of a stream, after defaults.
struct ResolvedOptions {
  stream::SessionOptions session;
  std::string source_lang, target_lang;
  bool audio = false;  // source units are audio chunks (push_audio), not words (push)
};

class Engine {
 public:
  // `speech_encoder` (may be null: text only) must outlive the engine; its llm_hidden is the model's n_embd.
  Engine(stream::StreamingModel& model, stream::SessionOptions defaults, EngineLimits limits,
         Metrics& metrics, const speech_encoder::SpeechEncoderModel* speech_encoder = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts/stops the engine thread; stop() ends every open stream (sinks get an Error "shutdown").
  void start();
  void stop();

  // Settings a stream with these options would get (errors: bad language pair, bad options).
  Result<ResolvedOptions> resolve(const StreamOptions& options, bool continuous_default) const;
  // Opens a stream. Fails at once when max_sessions are open, or when the worst-case KV caches of the open
  // streams and this one would not fit the memory budget. Words are pushed with push(). An audio
  // stream (options.audio) needs `audio`, which turns its samples into source units on the engine thread.
  Result<uint64_t> open(const ResolvedOptions& options, StreamSink sink,
                        std::unique_ptr<AudioUnits> audio = nullptr);
  // A chunk of source text (partial words allowed). Ignored for an unknown or closed id.
  void push(uint64_t id, std::string text);
  // Audio streams: newly arrived samples at the stream's rate, in order. Past max_unencoded_audio_ms
  // waiting for the encoder, the stream fails with "audio_backlog_full".
  void push_audio(uint64_t id, std::vector<float> samples);
  // End of source: the held-back partial word becomes a word, then the end marker.
  void end(uint64_t id);
  // Abandons a stream (client gone). Its sink is never called again after close() returns... unless
  // an event is already being delivered; sinks must tolerate a late call.
  void close(uint64_t id);

  int open_sessions() const;
  const stream::StreamingModel& model() const { return model_; }
  const stream::SessionOptions& defaults() const { return defaults_; }
  const speech_encoder::SpeechEncoderModel* speech_encoder() const { return speech_encoder_; }

 private:
  struct Stream;
  struct Command {
    enum class Kind { Open, Push, Audio, End, Close } kind;
    uint64_t id = 0;
    std::string text;
    std::vector<float> samples;  // Audio
    double at_ms = 0;
    std::unique_ptr<Stream> stream;  // Open
  };

  void run();
  void apply(Command& c);
  // The prompt's rows and the model's sentence ends (stream/sentence_ends.h) for a codec's prompt: either may
  // be null (then the session forwards its prompt itself, or only punctuation ends its segments).
  struct PromptModels {
    std::shared_ptr<const stream::PromptCache> prompt;
    std::shared_ptr<const stream::SentenceEndModel> sentence_ends;
  };
  PromptModels prompt_models_for(const stream::SegmentCodec& codec);
  void push_words(Stream& s, std::vector<std::string> words, double at_ms);
  void push_units(Stream& s, std::vector<AudioUnit> units, double at_ms);
  // A unit that ends a segment cut at a pause (AudioUnits): the continuous session's segment ends there.
  void end_audio_segment(Stream& s, const AudioUnit& u);
  // Audio streams, in two steps around one encoder pass over all streams (AudioUnits::encode_ready): feed at
  // most `chunks` encoder chunks of the waiting audio to the encoder's front end (true when some was fed);
  // then push the units it completed into the session; true while audio is left waiting.
  bool feed_waiting_audio(Stream& s, int chunks);
  bool take_encoded_audio(Stream& s);
  // Encoder slices and per-stream row shares for the next forward, by deadline; true while audio waits.
  bool plan_round();
  // End of source, once every unit has reached the session.
  void end_source(Stream& s, double at_ms);
  void fail(Stream& s, const std::string& code, const std::string& message);
  void on_event(Stream& s, const stream::Event& e);
  void retire_finished();
  Result<const stream::SegmentCodec*> codec_for(const std::string& src, const std::string& tgt) const;
  void enqueue(Command c);
  // Whether open streams' KV caches of `cache_bytes` at their worst fit the budget (with mu_ held).
  Status fits_memory_budget(uint64_t cache_bytes) const;

  stream::StreamingModel& model_;
  stream::SessionOptions defaults_;
  EngineLimits limits_;
  Metrics& metrics_;
  const speech_encoder::SpeechEncoderModel* speech_encoder_ = nullptr;
  int max_sentence_tokens_ = 0;  // source tokens one sentence may need, from the cache capacity

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool running_ = false;
  int reserved_ = 0;                   // streams opened and not yet retired (counted at open() for the limit)
  uint64_t reserved_cache_bytes_ = 0;  // their worst-case KV caches
  uint64_t next_id_ = 1;
  mutable std::map<std::pair<std::string, std::string>, std::unique_ptr<stream::TokenizerCodec>> codecs_;
  std::thread thread_;

  // Engine thread only.
  stream::Scheduler scheduler_;
  std::map<uint64_t, std::unique_ptr<Stream>> streams_;
  std::map<int, Stream*> by_handle_;
  // Per distinct prompt, built at the first stream that needs it.
  std::map<std::vector<int32_t>, PromptModels> prompt_models_;
  // The vocabulary's sentence-end marks, scanned once for every language pair's sentence-end model.
  std::optional<std::vector<int32_t>> end_marks_;
  double rate_window_start_ = 0;
  int64_t rate_window_tokens_ = 0;
  DeadlineSchedule deadline_;
};

double steady_now_ms();

}  // namespace gpstream::serve
