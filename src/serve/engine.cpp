// The engine thread: commands in, one Scheduler round, events out.
#include "serve/engine.h"

#include <chrono>
#include <cmath>
#include <set>
#include <span>

#include "tokenizer/prompt_template.h"
#include "util/memory_budget.h"

namespace gpstream::serve {

double steady_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
// Source rows kept free for the prompt and the end marker when sizing a sentence against the cache.
constexpr int kReservedSourceRows = 256;
}  // namespace

struct Engine::Stream {
  uint64_t id = 0;
  ResolvedOptions opts;
  const stream::SegmentCodec* codec = nullptr;
  StreamSink sink;
  std::unique_ptr<stream::Session> session;
  int handle = -1;
  WordBuffer buffer;
  double opened_ms = 0;
  uint64_t cache_bytes = 0;  // the worst case of its session's KV cache
  // Audio streams: samples → source units, and the samples not yet through it, oldest first.
  std::unique_ptr<AudioUnits> audio;
  struct WaitingAudio {
    std::vector<float> samples;
    size_t encoded = 0;  // samples already through the encoder
    double at_ms = 0;    // arrival
  };
  std::deque<WaitingAudio> unencoded;
  size_t unencoded_samples = 0;
  // This round's slices of `unencoded` fed to the encoder (feed_waiting_audio), oldest first: samples, and
  // the encoder chunks ready once they were in.
  struct FedSlice {
    size_t n = 0;
    int64_t chunks_ready = 0;
  };
  std::vector<FedSlice> fed;
  double first_audio_ms = -1;        // arrival of its first samples
  double audio_received_ms = 0;      // audio received so far
  bool end_waits_for_audio = false;  // the end arrived while audio was still waiting
  double end_arrival_ms = 0;
  int segment = 0;
  int words_in_segment = 0;
  bool ended = false;
  int64_t inputs_applied = 0;
  bool idle_reported = false;
  bool done = false;
  int64_t tokens_counted = 0;
};

Engine::Engine(stream::StreamingModel& model, stream::SessionOptions defaults, EngineLimits limits,
               Metrics& metrics, const speech_encoder::SpeechEncoderModel* speech_encoder)
    : model_(model),
      defaults_(std::move(defaults)),
      limits_(limits),
      metrics_(metrics),
      speech_encoder_(speech_encoder),
      scheduler_(*model.model, limits.deadline.rows_per_round),
      deadline_(limits.deadline) {
  max_sentence_tokens_ = std::max(16, defaults_.max_cache_rows - kReservedSourceRows);
}

Engine::~Engine() {
  stop();
}

void Engine::start() {
  std::lock_guard lock(mu_);
  if (running_ || thread_.joinable()) return;
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

void Engine::stop() {
  {
    std::lock_guard lock(mu_);
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<const stream::SegmentCodec*> Engine::codec_for(const std::string& src, const std::string& tgt) const {
  if (src == model_.meta.source_lang && tgt == model_.meta.target_lang) return model_.codec.get();
  for (const std::string* code : {&src, &tgt})
    if (tokenizer::language_name(*code) == *code)
      return invalid_argument("unknown language code '" + *code + "'");
  std::lock_guard lock(mu_);
  auto it = codecs_.find({src, tgt});
  if (it != codecs_.end()) return static_cast<const stream::SegmentCodec*>(it->second.get());
  if (static_cast<int>(codecs_.size()) >= limits_.max_language_pairs)
    return invalid_argument("too many language pairs in use (limit " +
                            std::to_string(limits_.max_language_pairs) + ")");
  auto codec = std::make_unique<stream::TokenizerCodec>(
      model_.tokenizer, model_.meta.prompt_template.with_languages(tokenizer::language_name(src),
                                                                   tokenizer::language_name(tgt)));
  const stream::SegmentCodec* p = codec.get();
  codecs_.emplace(std::make_pair(src, tgt), std::move(codec));
  return p;
}

Result<ResolvedOptions> Engine::resolve(const StreamOptions& o, bool continuous_default) const {
  ResolvedOptions r;
  r.session = defaults_;
  // A model is trained for a range of lags (gpstream.json's k_min..k_max); a stream may not ask for another.
  const stream::ModelMeta& meta = model_.meta;
  if (o.k && meta.from_file && (*o.k < meta.k_min || *o.k > meta.k_max))
    return invalid_argument("'k': this model was trained for k from " + std::to_string(meta.k_min) + " to " +
                            std::to_string(meta.k_max) + ", got " + std::to_string(*o.k));
  if (o.k) r.session.k = *o.k;
  if (o.paradigm) r.session.paradigm = *o.paradigm;
  if (o.phi) r.session.phi = *o.phi;
  if (o.end_after_source) r.session.end_after_source = *o.end_after_source;
  if (o.beam) r.session.beam = *o.beam;
  if (o.policy) r.session.policy = *o.policy;
  if (Status st = stream::check_policy(r.session.policy, r.session.paradigm); !st.ok())
    return invalid_argument("'policy': " + st.error().message());
  if (r.session.beam > 1 &&
      (r.session.decoding.temperature > 0 || r.session.decoding.repetition_penalty != 1.0f))
    return invalid_argument("'beam': word beam search needs greedy decoding, and this server samples");
  if (r.session.policy.kind == stream::PolicyKind::LocalAgreement &&
      r.session.paradigm != stream::Paradigm::Offline &&
      (r.session.beam > 1 || r.session.decoding.temperature > 0))
    return invalid_argument(
        "'policy': local-agreement compares greedy continuations: it needs 'beam' 1 and a server that does "
        "not sample");
  r.session.continuous = o.continuous.value_or(continuous_default);
  r.source_lang = o.source_lang.value_or(model_.meta.source_lang);
  r.target_lang = o.target_lang.value_or(model_.meta.target_lang);
  GPS_TRY(codec_for(r.source_lang, r.target_lang));
  return r;
}

Result<uint64_t> Engine::open(const ResolvedOptions& options, StreamSink sink,
                              std::unique_ptr<AudioUnits> audio) {
  GPS_ASSIGN(const stream::SegmentCodec* codec, codec_for(options.source_lang, options.target_lang));
  if (options.audio && speech_encoder_ == nullptr)
    return invalid_argument("this server's model takes text, not audio");
  if (options.audio != (audio != nullptr))
    return invalid_argument(options.audio ? "an audio stream needs its AudioUnits"
                                          : "a text stream takes no AudioUnits");
  auto s = std::make_unique<Stream>();
  s->audio = std::move(audio);
  s->opts = options;
  s->codec = codec;
  s->sink = std::move(sink);
  s->opened_ms = steady_now_ms();
  s->cache_bytes =
      stream::Session::worst_case_cache_bytes(model_.model->config(), options.session.max_cache_rows);
  uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (!running_) return unsupported("the server is shutting down");
    if (reserved_ >= limits_.max_sessions) {
      ++metrics_.sessions_rejected;
      return out_of_range("too many open streams (limit " + std::to_string(limits_.max_sessions) + ")");
    }
    if (Status fits = fits_memory_budget(saturating_sum({reserved_cache_bytes_, s->cache_bytes}));
        !fits.ok()) {
      ++metrics_.sessions_rejected;
      return fits.error();
    }
    reserved_cache_bytes_ += s->cache_bytes;
    ++reserved_;
    id = next_id_++;
    s->id = id;
    Command c{Command::Kind::Open, id, {}, {}, s->opened_ms, std::move(s)};
    commands_.push_back(std::move(c));
    ++metrics_.queue_depth;
  }
  ++metrics_.sessions_active;
  ++metrics_.sessions_total;
  cv_.notify_one();
  return id;
}

Status Engine::fits_memory_budget(uint64_t cache_bytes) const {
  const std::string what = "the KV caches of " + std::to_string(reserved_ + 1) + " open streams (" +
                           std::to_string(defaults_.max_cache_rows) + " rows per region each, at most)";
  if (!limits_.memory_budget_bytes) return check_memory_budget(cache_bytes, what);
  if (cache_bytes <= *limits_.memory_budget_bytes) return {};
  return out_of_range(what + " need about " + format_bytes(cache_bytes) + " of memory but the budget is " +
                      format_bytes(*limits_.memory_budget_bytes) + "; try again later");
}

void Engine::enqueue(Command c) {
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    commands_.push_back(std::move(c));
    ++metrics_.queue_depth;
  }
  cv_.notify_one();
}

void Engine::push(uint64_t id, std::string text) {
  enqueue(Command{Command::Kind::Push, id, std::move(text), {}, steady_now_ms(), nullptr});
}
void Engine::push_audio(uint64_t id, std::vector<float> samples) {
  enqueue(Command{Command::Kind::Audio, id, {}, std::move(samples), steady_now_ms(), nullptr});
}
void Engine::end(uint64_t id) {
  enqueue(Command{Command::Kind::End, id, {}, {}, steady_now_ms(), nullptr});
}
void Engine::close(uint64_t id) {
  enqueue(Command{Command::Kind::Close, id, {}, {}, steady_now_ms(), nullptr});
}

int Engine::open_sessions() const {
  std::lock_guard lock(mu_);
  return reserved_;
}

void Engine::fail(Stream& s, const std::string& code, const std::string& message) {
  if (s.done) return;
  s.done = true;
  ++metrics_.session_errors;
  StreamEvent e;
  e.kind = StreamEventKind::Error;
  e.error_code = code;
  e.error_message = message;
  e.t_ms = steady_now_ms() - s.opened_ms;
  s.sink(e);
}

void Engine::push_words(Stream& s, std::vector<std::string> words, double at_ms) {
  const bool continuous = s.opts.session.continuous;
  for (std::string& w : words) {
    if (s.done) return;
    const int64_t open = s.session->open_segment_source_bound();
    if (open + stream::Session::source_bound(w) > max_sentence_tokens_) {
      if (!continuous || open == 0) {
        fail(s, "sentence_too_long",
             "a sentence may hold about " + std::to_string(max_sentence_tokens_) +
                 " bytes of source (the model's cache)");
        return;
      }
      // A continuous stream drops nothing: the open segment ends before this word.
      if (Status st = s.session->end_segment(); !st.ok()) {
        fail(s, "engine_error", st.error().message());
        return;
      }
    }
    if (s.session->source_units_waiting() + 1 > limits_.max_backlog_words) {
      fail(s, "backlog_full",
           "more than " + std::to_string(limits_.max_backlog_words) +
               " source words are waiting to be translated; slow down");
      return;
    }
    if (Status st = s.session->push_source(w, at_ms); !st.ok()) {
      fail(s, "bad_source", st.error().message());
      return;
    }
    ++metrics_.source_words;
  }
}

void Engine::push_units(Stream& s, std::vector<AudioUnit> units, double at_ms) {
  for (AudioUnit& u : units) {
    if (s.done) return;
    if (u.n_rows == 0) {  // a segment's end after its last rows (AudioUnits, cut at a pause)
      end_audio_segment(s, u);
      continue;
    }
    if (s.session->open_segment_source_bound() + u.n_rows > max_sentence_tokens_) {
      fail(s, "audio_too_long",
           "an utterance may hold about " + std::to_string(max_sentence_tokens_) +
               " encoder rows (the model's cache); end it and start a new stream");
      return;
    }
    if (s.session->source_units_waiting() + 1 > limits_.max_backlog_words) {
      fail(s, "backlog_full",
           "more than " + std::to_string(limits_.max_backlog_words) +
               " audio chunks are waiting to be transcribed; slow down");
      return;
    }
    if (Status st = s.session->push_source_embeddings(u.rows, static_cast<int>(model_.model->config().n_embd),
                                                      u.duration_ms, at_ms);
        !st.ok()) {
      fail(s, "bad_source", st.error().message());
      return;
    }
    ++metrics_.audio_chunks;
    metrics_.audio_ms += u.duration_ms;
    if (u.ends_segment) end_audio_segment(s, u);
  }
}

void Engine::end_audio_segment(Stream& s, const AudioUnit& u) {
  if (!u.ends_segment || !s.opts.session.continuous || s.session->last_unit_ends_segment()) return;
  if (Status st = s.session->end_segment(); !st.ok()) fail(s, "engine_error", st.error().message());
}

Engine::PromptModels Engine::prompt_models_for(const stream::SegmentCodec& codec) {
  auto ids = codec.encode(stream::SegmentKind::Prompt, "", true);
  if (!ids) return {};  // Session::create reports the template's error
  if (auto it = prompt_models_.find(*ids); it != prompt_models_.end()) return it->second;
  auto built = stream::PromptCache::build(*model_.model, codec);
  if (!built) return {};  // the session forwards its prompt itself (and reports what is wrong)
  PromptModels m;
  m.prompt = std::move(built).value();
  if (!end_marks_)
    end_marks_ = stream::SentenceEndModel::scan_end_marks(codec, model_.model->config().n_vocab);
  if (auto ends = stream::SentenceEndModel::build(*model_.model, codec, m.prompt, &*end_marks_))
    m.sentence_ends = std::move(ends).value();
  if (prompt_models_.size() >= static_cast<size_t>(limits_.max_language_pairs)) prompt_models_.clear();
  return prompt_models_[*ids] = std::move(m);
}

void Engine::apply(Command& c) {
  if (c.kind == Command::Kind::Open) {
    Stream& s = *c.stream;
    PromptModels prompt = prompt_models_for(*s.codec);
    s.opts.session.prompt_cache = std::move(prompt.prompt);
    s.opts.session.sentence_ends = std::move(prompt.sentence_ends);
    auto session = stream::Session::create(*model_.model, *s.codec, s.opts.session);
    streams_[c.id] = std::move(c.stream);
    if (!session) {
      fail(s, "bad_options", session.error().message());
      return;
    }
    s.session = std::move(session).value();
    s.handle = scheduler_.add(s.session.get());
    by_handle_[s.handle] = &s;
    return;
  }
  auto it = streams_.find(c.id);
  if (it == streams_.end() || it->second->done) return;
  Stream& s = *it->second;
  switch (c.kind) {
    case Command::Kind::Push: {
      if (s.opts.audio) {
        fail(s, "audio_expected", "this stream takes audio: send PCM samples as binary frames");
        return;
      }
      if (s.ended) {
        fail(s, "protocol", "source text after the end of the source");
        return;
      }
      std::vector<std::string> words = s.buffer.append(c.text);
      if (static_cast<int>(s.buffer.pending_bytes()) > limits_.max_pending_bytes) {
        fail(s, "word_too_long",
             "a word longer than " + std::to_string(limits_.max_pending_bytes) + " bytes");
        return;
      }
      push_words(s, std::move(words), c.at_ms);
      break;
    }
    case Command::Kind::Audio:
      if (!s.opts.audio) {
        fail(s, "binary_frame", "this stream takes text, not audio");
        return;
      }
      if (s.ended || s.end_waits_for_audio) {
        fail(s, "protocol", "audio after the end of the source");
        return;
      }
      if (const double rate = s.audio->sample_rate(),
          waiting_ms = static_cast<double>(s.unencoded_samples + c.samples.size()) * 1000.0 / rate;
          waiting_ms > limits_.max_unencoded_audio_ms) {
        fail(s, "audio_backlog_full",
             "more than " + std::to_string(static_cast<int64_t>(limits_.max_unencoded_audio_ms / 1000)) +
                 " s of audio are waiting for the speech encoder; send audio no faster than real time");
        return;
      }
      if (c.samples.empty() && s.unencoded.empty()) break;
      if (s.first_audio_ms < 0) s.first_audio_ms = c.at_ms;
      s.audio_received_ms += static_cast<double>(c.samples.size()) * 1000.0 / s.audio->sample_rate();
      // Counted in inputs_applied once its last sample is through the encoder (take_encoded_audio).
      s.unencoded_samples += c.samples.size();
      s.unencoded.push_back(Stream::WaitingAudio{std::move(c.samples), 0, c.at_ms});
      return;
    case Command::Kind::End: {
      if (s.ended || s.end_waits_for_audio) return;
      if (!s.unencoded.empty()) {  // applied once the audio before it has reached the session
        s.end_waits_for_audio = true;
        s.end_arrival_ms = c.at_ms;
        return;
      }
      end_source(s, c.at_ms);
      if (s.done) return;
      break;
    }
    case Command::Kind::Close:
      s.done = true;  // the client is gone: no sink call
      return;
    case Command::Kind::Open:
      break;
  }
  ++s.inputs_applied;
  s.idle_reported = false;
}

void Engine::end_source(Stream& s, double at_ms) {
  if (s.audio) {
    std::vector<AudioUnit> units;
    s.audio->finish(units);
    push_units(s, std::move(units), at_ms);
  } else {
    push_words(s, s.buffer.finish(), at_ms);
  }
  if (s.done) return;
  s.ended = true;
  // Nothing left to translate: no word at all (as translate does for an empty line), or a continuous
  // stream whose last sentence is finished — ending the session there would translate an empty one.
  if (s.session->source_units_waiting() == 0) {
    s.done = true;
    StreamEvent e;
    e.kind = StreamEventKind::Finished;
    e.segment = s.segment;
    e.t_ms = steady_now_ms() - s.opened_ms;
    s.sink(e);
    return;
  }
  if (Status st = s.session->end_source(at_ms); !st.ok()) fail(s, "protocol", st.error().message());
}

bool Engine::feed_waiting_audio(Stream& s, int chunks) {
  s.fed.clear();
  if (s.done || !s.audio) return false;
  const double samples_per_chunk = s.audio->chunk_ms() * s.audio->sample_rate() / 1000.0;
  size_t budget =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(samples_per_chunk * std::max(1, chunks))));
  for (size_t k = 0; budget > 0 && k < s.unencoded.size(); ++k) {
    const Stream::WaitingAudio& w = s.unencoded[k];
    const size_t from = k == 0 ? w.encoded : 0;
    const size_t n = std::min(budget, w.samples.size() - from);
    s.audio->feed(std::span<const float>(w.samples).subspan(from, n));
    budget -= n;
    s.fed.push_back(Stream::FedSlice{n, s.audio->chunks_ready()});
  }
  return !s.fed.empty();
}

bool Engine::take_encoded_audio(Stream& s) {
  if (s.done || !s.audio) return false;
  // Each fed slice gets the units (one per encoder chunk) it completed, at its arrival time, as if it had
  // been encoded alone.
  int64_t taken = 0;
  for (const Stream::FedSlice& f : s.fed) {
    if (s.done) break;
    Stream::WaitingAudio& front = s.unencoded.front();
    std::vector<AudioUnit> units;
    s.audio->take_units(units, static_cast<size_t>(f.chunks_ready - taken));
    taken = f.chunks_ready;
    front.encoded += f.n;
    s.unencoded_samples -= f.n;
    push_units(s, std::move(units), front.at_ms);
    if (front.encoded == front.samples.size()) {
      s.unencoded.pop_front();
      ++s.inputs_applied;
      s.idle_reported = false;
    }
  }
  s.fed.clear();
  if (s.done) return false;
  if (s.unencoded.empty() && s.end_waits_for_audio) {
    s.end_waits_for_audio = false;
    end_source(s, s.end_arrival_ms);
    ++s.inputs_applied;
    s.idle_reported = false;
  }
  return !s.unencoded.empty();
}

bool Engine::plan_round() {
  std::vector<Stream*> order;
  std::vector<StreamDemand> demands;
  std::set<int> forwarded(scheduler_.last_round_members().begin(), scheduler_.last_round_members().end());
  for (auto& [_, s] : streams_) {
    if (s->done) continue;
    StreamDemand d;
    d.audio = s->audio != nullptr;
    d.first_audio_ms = s->first_audio_ms;
    d.audio_received_ms = s->audio_received_ms;
    if (s->session) d.unread_words = s->session->source_units_waiting() - s->session->words_read();
    d.audio_waiting = !s->unencoded.empty();
    d.forwarded_last_round = s->handle >= 0 && forwarded.contains(s->handle);
    order.push_back(s.get());
    demands.push_back(d);
  }
  const std::vector<StreamShare> shares = deadline_.plan(demands, steady_now_ms());
  // The speech encoder's Transformer runs once over every stream's slice (stacked rows, per-stream caches:
  // AudioUnits::encode_ready); then each stream's units reach its session, stream by stream as before.
  std::vector<AudioUnits*> encoding;
  for (size_t i = 0; i < order.size(); ++i)
    if (shares[i].encoder_chunks > 0 && feed_waiting_audio(*order[i], shares[i].encoder_chunks))
      encoding.push_back(order[i]->audio.get());
  if (!encoding.empty()) AudioUnits::encode_ready(encoding);
  bool audio_waiting = false;
  for (size_t i = 0; i < order.size(); ++i) {
    Stream& s = *order[i];
    if (shares[i].encoder_chunks > 0)
      audio_waiting |= take_encoded_audio(s);
    else
      audio_waiting |= !s.unencoded.empty() && !s.done;
    if (s.handle >= 0) scheduler_.set_max_rows(s.handle, shares[i].max_rows);
  }
  return audio_waiting;
}

void Engine::on_event(Stream& s, const stream::Event& e) {
  const double now = steady_now_ms();
  StreamEvent out;
  out.t_ms = now - s.opened_ms;
  switch (e.kind) {
    case stream::EventKind::Word: {
      // The arrival of the last source unit it read (or of the end), as pushed into the session.
      const double ref = e.arrival_ms.value_or(s.opened_ms);
      out.kind = StreamEventKind::Word;
      out.word = e.word;
      out.index = s.words_in_segment++;
      out.segment = s.segment;
      out.delay = e.delay;
      out.delay_ms = e.delay_ms;
      out.audio = s.opts.audio;
      out.elapsed_ms = e.elapsed_ms;
      out.stream_delay = e.stream_delay;
      out.stream_elapsed_ms = e.stream_elapsed_ms;
      out.lag_ms = std::max(0.0, now - ref);
      ++metrics_.target_words;
      metrics_.word_lag.observe(out.lag_ms / 1000.0);
      s.sink(out);
      return;
    }
    case stream::EventKind::Tentative:
      out.kind = StreamEventKind::Tentative;
      out.words = e.words;
      out.segment = s.segment;
      s.sink(out);
      return;
    case stream::EventKind::NeedSource:
      if (s.idle_reported) return;
      s.idle_reported = true;
      out.kind = StreamEventKind::Idle;
      out.inputs_applied = s.inputs_applied;
      s.sink(out);
      return;
    case stream::EventKind::SegmentEnd: {
      out.kind = StreamEventKind::SegmentEnd;
      out.segment = s.segment++;
      out.index = s.words_in_segment;
      out.truncated = e.truncated;
      s.words_in_segment = 0;
      s.sink(out);
      return;
    }
    case stream::EventKind::Finished:
      if (const int64_t unread = s.session->source_units_waiting() - s.session->words_read();
          s.opts.session.continuous && unread > 0) {
        fail(s, "engine_error",
             "the model left " + std::to_string(unread) + " source units unread");  // never expected
        return;
      }
      out.kind = StreamEventKind::Finished;
      out.truncated = e.truncated;
      out.index = s.words_in_segment;
      out.segment = s.segment;
      s.done = true;
      s.sink(out);
      return;
  }
}

void Engine::retire_finished() {
  int retired = 0;
  uint64_t retired_cache_bytes = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = *it->second;
    if (!s.done) {
      ++it;
      continue;
    }
    if (s.handle >= 0) {
      scheduler_.remove(s.handle);
      by_handle_.erase(s.handle);
    }
    retired_cache_bytes += s.cache_bytes;
    it = streams_.erase(it);
    ++retired;
  }
  if (retired) {
    std::lock_guard lock(mu_);
    reserved_ -= retired;
    reserved_cache_bytes_ -= retired_cache_bytes;
    metrics_.sessions_active -= retired;
  }
}

void Engine::run() {
  bool busy = false;
  rate_window_start_ = steady_now_ms();
  for (;;) {
    std::deque<Command> cmds;
    {
      std::unique_lock lock(mu_);
      if (!busy) cv_.wait_for(lock, std::chrono::seconds(1), [&] { return !commands_.empty() || !running_; });
      if (!running_) break;
      cmds.swap(commands_);
      metrics_.queue_depth -= static_cast<int64_t>(cmds.size());
    }
    for (Command& c : cmds) apply(c);
    const bool audio_waiting = plan_round();
    retire_finished();
    auto n = scheduler_.round([&](int handle, const stream::Event& e) {
      auto it = by_handle_.find(handle);
      if (it != by_handle_.end() && !it->second->done) on_event(*it->second, e);
    });
    if (!n.ok()) {
      // A forward failed: the batch is lost for every stream in it. Limits are checked before words
      // reach a session so this should not happen; end all streams rather than retry forever.
      for (auto& [_, s] : streams_) fail(*s, "engine_error", n.error().message());
      busy = false;
    } else {
      if (*n > 0) ++metrics_.forwards;
      busy = *n > 0 || audio_waiting;
    }
    int64_t tokens = 0;
    for (auto& [_, s] : streams_) {
      if (!s->session) continue;
      const auto& st = s->session->stats();
      const int64_t total = st.source_tokens + st.target_tokens + st.refeeds;
      tokens += total - s->tokens_counted;
      s->tokens_counted = total;
    }
    metrics_.forwarded_tokens += tokens;
    int64_t backlog = 0;
    for (auto& [_, s] : streams_)
      if (s->session && !s->done) backlog += s->session->source_units_waiting();
    metrics_.backlog_words = backlog;
    rate_window_tokens_ += tokens;
    const double now = steady_now_ms();
    if (now - rate_window_start_ >= 2000) {
      metrics_.tokens_per_second = rate_window_tokens_ * 1000.0 / (now - rate_window_start_);
      rate_window_start_ = now;
      rate_window_tokens_ = 0;
    }
    retire_finished();
  }
  for (auto& [_, s] : streams_) fail(*s, "shutdown", "the server is shutting down");
  retire_finished();
}

}  // namespace gpstream::serve
