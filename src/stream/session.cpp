// The streaming loop of gpe.md §5 as a state machine:
//   Start    → read the first units (wait-k: k), feed prompt + units + header in one forward
//   Decode   → a logits row arrives: choose y; at a word boundary emit the word, and if the policy wants
//              more source go to NeedRead (y is dropped), else feed y
//   NeedRead → once the wanted units arrived: pop the last target row, forward the units and re-feed
//              the popped token (reencode-pos re-rotates, reencode recomputes the target rows)
//   Finished
// A unit's source rows are its word's token ids or its audio chunk's embedding rows (queue_unit); nothing
// else in the loop knows which. Source rows are forwarded once and never recomputed (reencode recomputes
// target rows only), so a chunk's rows are released once their forward completes.
#include "stream/session.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "stream/log_probs.h"
#include "stream/sentence_ends.h"
#include "tokenizer/segment_encoder.h"
#include "tokenizer/unicode.h"
#include "util/clock.h"
#include "util/memory_budget.h"

namespace gpstream::stream {
namespace {

// Rows per cache region a continuous session keeps allocated past its prompt between sentences: room for a
// typical sentence without regrowing, while a long sentence's memory is given back once it ends.
constexpr int kSegmentCacheRows = 256;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return is_space(c); });
}

Event make_event(EventKind kind, bool truncated = false) {
  Event e;
  e.kind = kind;
  e.truncated = truncated;
  return e;
}

}  // namespace

namespace {

// The word without its closing quotes and brackets (" ' ) ] » ” ’), whose last byte is then the mark.
std::string_view strip_closers(std::string_view w) {
  for (;;) {
    if (!w.empty() && (w.back() == '"' || w.back() == '\'' || w.back() == ')' || w.back() == ']')) {
      w.remove_suffix(1);
    } else if (w.size() >= 2 && w.substr(w.size() - 2) == "\xC2\xBB") {  // »
      w.remove_suffix(2);
    } else if (w.size() >= 3 &&
               (w.substr(w.size() - 3) == "\xE2\x80\x9D" || w.substr(w.size() - 3) == "\xE2\x80\x99")) {
      w.remove_suffix(3);  // ” ’
    } else {
      return w;
    }
  }
}

}  // namespace

bool ends_sentence(std::string_view w) {
  w = strip_closers(w);
  return !w.empty() && (w.back() == '.' || w.back() == '!' || w.back() == '?');
}

bool ends_clause(std::string_view w) {
  w = strip_closers(w);
  return !w.empty() && (w.back() == ',' || w.back() == ';' || w.back() == ':');
}

bool segment_ends_at(std::string_view word, int n, int max_words) {
  if (ends_sentence(word)) return true;
  if (max_words <= 0) return false;
  return n >= max_words || (ends_clause(word) && 4 * n >= 3 * max_words);
}

Session::Session(model::ForwardModel& model, const SegmentCodec& codec, SessionOptions options)
    : model_(model),
      codec_(codec),
      opts_(std::move(options)),
      sampler_(opts_.decoding),
      cache_(model.config(), opts_.max_cache_rows) {
  if (opts_.paradigm == Paradigm::Offline) {
    policy_ = std::make_unique<ReadAllPolicy>();
  } else {
    auto policy = make_policy(opts_.policy, opts_.k, opts_.end_after_source);
    GPS_ASSERT(policy.ok(), "a session's policy is checked before the session is built");
    policy_ = std::move(policy).value();
  }
  if (!opts_.clock) {
    opts_.clock = [] { return steady_ms(); };
  }
}

Status check_policy(const PolicySpec& spec, Paradigm paradigm) {
  if (spec.kind == PolicyKind::WaitK) return {};
  GPS_TRY(validate_policy(spec));
  if (paradigm != Paradigm::Group && paradigm != Paradigm::BatchStream &&
      paradigm != Paradigm::InterleavedBlocked)
    return invalid_argument(
        std::string("the ") + policy_name(spec.kind) +
        " policy runs with the group, batch-stream and interleaved-blocked paradigms only, "
        "not " +
        paradigm_name(paradigm));
  return {};
}

uint64_t Session::worst_case_cache_bytes(const model::ModelConfig& config, int max_cache_rows) {
  auto u = [](int x) { return static_cast<uint64_t>(std::max(x, 0)); };
  return saturating_product({2 /* regions */, 2 /* K and V */, sizeof(float), u(max_cache_rows),
                             u(config.n_layer), u(config.n_head_kv), u(config.head_dim)});
}

Result<std::unique_ptr<Session>> Session::create(model::ForwardModel& model, const SegmentCodec& codec,
                                                 SessionOptions options) {
  if (options.k < 1)
    return invalid_argument("wait-k: k must be at least 1 (got " + std::to_string(options.k) + ")");
  GPS_TRY(check_policy(options.policy, options.paradigm));
  if (options.max_segment_words < 0) return invalid_argument("max_segment_words must be at least 0");
  if (options.max_tokens_per_word < 1 || options.max_target_tokens < 1)
    return invalid_argument("max tokens per word and per sentence must be positive");
  if (options.max_cache_rows < 1) return invalid_argument("max_cache_rows must be positive");
  if (options.beam < 1)
    return invalid_argument("the word beam must be at least 1 (got " + std::to_string(options.beam) + ")");
  if (options.beam > 1 && (options.decoding.temperature > 0 || options.decoding.repetition_penalty != 1.0f))
    return invalid_argument("word beam search (beam " + std::to_string(options.beam) +
                            ") needs greedy decoding: no temperature, no repetition penalty");
  for (int layer : options.policy.layers)
    if (options.policy.kind == PolicyKind::AlignAtt && layer >= model.config().n_layer)
      return invalid_argument("alignatt policy: layer " + std::to_string(layer) + " of a model with " +
                              std::to_string(model.config().n_layer) + " layers");
  if (options.policy.kind == PolicyKind::LocalAgreement && options.paradigm != Paradigm::Offline &&
      (options.decoding.temperature > 0 || options.beam > 1))
    return invalid_argument(
        "the local-agreement policy compares greedy continuations: it needs greedy decoding (no "
        "temperature) and beam 1");
  // The cache grows on demand up to max_cache_rows per region; that bound must fit in memory.
  GPS_TRY(check_memory_budget(worst_case_cache_bytes(model.config(), options.max_cache_rows),
                              "a session's cache of " + std::to_string(options.max_cache_rows) +
                                  " rows per region (max_cache_rows)"));
  if (options.positions_removed == PositionsRemoved::Source ||
      options.positions_removed == PositionsRemoved::All) {
    // Both hold rows computed at the source's own positions.
    options.prompt_cache = nullptr;
    options.sentence_ends = nullptr;
  }
  auto s = std::unique_ptr<Session>(new Session(model, codec, std::move(options)));
  GPS_ASSIGN(s->prompt_ids_, codec.encode(SegmentKind::Prompt, "", true));
  GPS_ASSIGN(s->header_ids_, codec.encode(SegmentKind::Header, "", true));
  GPS_ASSIGN(s->source_end_ids_, codec.encode(SegmentKind::SourceEnd, "", true));
  GPS_ASSIGN(std::vector<int32_t> target_end, codec.encode(SegmentKind::TargetEnd, "", true));
  if (target_end.empty()) return invalid_argument("the template's target end marker encodes to no token");
  if (s->source_end_ids_.empty())
    return invalid_argument("the template's source end marker encodes to no token");
  s->eos_id_ = target_end[0];
  if (const auto& pc = s->opts_.prompt_cache; pc && (pc->model() != &model || pc->ids() != s->prompt_ids_))
    return invalid_argument("the prompt cache was built for another model or another prompt");
  if (const auto& se = s->opts_.sentence_ends; se && s->opts_.continuous) {
    if (se->model() != &model || se->prompt().ids() != s->prompt_ids_)
      return invalid_argument("the sentence-end model was built for another model or another prompt");
    if (s->opts_.model_sentence_ends_after < 0)
      return invalid_argument("model_sentence_ends_after must be at least 0");
    if (!std::isfinite(s->opts_.sentence_end_bias))
      return invalid_argument("the sentence-end bias must be a finite number");
    // Its source-only cache holds at most one segment, as the session's source region does.
    GPS_TRY(check_memory_budget(worst_case_cache_bytes(model.config(), s->opts_.max_cache_rows) / 2 * 3,
                                "a session's cache of " + std::to_string(s->opts_.max_cache_rows) +
                                    " rows per region and its sentence-end detector's"));
    s->sentence_end_detector_ = std::make_unique<SentenceEndDetector>(
        model, codec, se, s->opts_.max_cache_rows, s->opts_.sentence_end_bias);
  }
  size_t template_rows = 0;
  for (const auto* ids : {&s->prompt_ids_, &s->header_ids_, &s->source_end_ids_, &target_end}) {
    GPS_TRY(check_template_ids(*ids, model.config().n_vocab));
    template_rows += ids->size();
  }
  // The template's rows share the cache regions with the words: they must leave room for some.
  if (template_rows >= static_cast<size_t>(s->opts_.max_cache_rows))
    return out_of_range("the template encodes to " + std::to_string(template_rows) +
                        " tokens, leaving no room for words in a session's cache of " +
                        std::to_string(s->opts_.max_cache_rows) + " rows per region (max_cache_rows)");
  return s;
}

double Session::now_ms() const {
  return opts_.clock();
}

void Session::add_unit(SourceUnit unit) {
  last_unit_ends_segment_ = unit.ends_segment;
  if (!stream_t0_) stream_t0_ = now_ms();
  if (opts_.continuous && (source_finished_ || !next_units_.empty())) {
    next_units_.push_back(std::move(unit));
    return;
  }
  if (!t0_) t0_ = now_ms();
  units_.push_back(std::move(unit));
  if (units_.back().ends_segment) source_finished_ = true;
}

Status Session::push_source(std::string_view text, std::optional<double> arrival_ms) {
  if (stream_finished_) return invalid_argument("push_source after end_source");
  if (!tokenizer::is_valid_utf8(text)) return invalid_argument("source text is not valid UTF-8");
  std::vector<std::string> words = tokenizer::split_words(text);
  if (words.empty()) return {};
  if (source_kind_ == SourceKind::Embeddings)
    return invalid_argument(
        "push_source: this session's source is audio (input embeddings); a session takes one kind");
  source_kind_ = SourceKind::Text;
  for (std::string& w : words) {
    SourceUnit u;
    u.word = std::move(w);
    u.arrival_ms = arrival_ms;
    if (opts_.continuous) {
      u.ask_sentence_end =
          sentence_end_detector_ && words_since_sentence_end_ >= opts_.model_sentence_ends_after;
      words_since_sentence_end_ =
          ends_sentence(u.word) ? 0 : std::min(words_since_sentence_end_ + 1, 1 << 30);
      u.ends_segment = segment_ends_at(u.word, ++open_segment_words_, opts_.max_segment_words);
      if (u.ends_segment) open_segment_words_ = 0;
    }
    add_unit(std::move(u));
  }
  return {};
}

Status Session::push_source_embeddings(std::span<const float> rows, int row_width, double duration_ms,
                                       std::optional<double> arrival_ms) {
  const std::string what = "audio chunk: ";
  if (stream_finished_) return invalid_argument(what + "pushed after end_source");
  if (source_kind_ == SourceKind::Text)
    return invalid_argument(what + "this session's source is text words; a session takes one kind");
  const int n_embd = model_.config().n_embd;
  if (row_width != n_embd)
    return invalid_argument(what + "rows of " + std::to_string(row_width) +
                            " floats, the model's n_embd is " + std::to_string(n_embd));
  if (rows.empty()) return invalid_argument(what + "no rows (a source unit needs at least one)");
  if (rows.size() % static_cast<size_t>(row_width) != 0)
    return invalid_argument(what + std::to_string(rows.size()) +
                            " floats are not a whole number of rows of " + std::to_string(row_width));
  const size_t n_rows = rows.size() / static_cast<size_t>(row_width);
  if (n_rows > static_cast<size_t>(opts_.max_cache_rows))
    return invalid_argument(what + std::to_string(n_rows) + " rows exceed the cache's " +
                            std::to_string(opts_.max_cache_rows) + " rows per region (max_cache_rows)");
  for (size_t i = 0; i < rows.size(); ++i)
    if (!std::isfinite(rows[i]))
      return invalid_argument(what + "non-finite value in row " +
                              std::to_string(i / static_cast<size_t>(row_width)));
  if (!std::isfinite(duration_ms) || duration_ms < 0)
    return invalid_argument(what + "the duration must be a finite number of milliseconds, at least 0");
  source_kind_ = SourceKind::Embeddings;
  SourceUnit u;
  u.rows.assign(rows.begin(), rows.end());
  u.n_rows = static_cast<int>(n_rows);
  u.duration_ms = duration_ms;
  u.arrival_ms = arrival_ms;
  add_unit(std::move(u));
  return {};
}

int64_t Session::open_segment_source_bound() const {
  int64_t bound = 0;
  auto add = [&](const SourceUnit& u) {
    if (opts_.continuous && u.ends_segment) return false;
    bound += u.n_rows > 0 ? u.n_rows : source_bound(u.word);
    return true;
  };
  for (auto it = next_units_.rbegin(); it != next_units_.rend(); ++it)
    if (!add(*it)) return bound;
  for (auto it = units_.rbegin(); it != units_.rend(); ++it)
    if (!add(*it)) return bound;
  return bound;
}

Status Session::end_segment() {
  if (!opts_.continuous) return invalid_argument("end_segment: only continuous streams have segments");
  if (stream_finished_) return invalid_argument("end_segment after end_source");
  SourceUnit* last = nullptr;
  if (!next_units_.empty())
    last = &next_units_.back();
  else if (!source_finished_ && !units_.empty())
    last = &units_.back();
  if (!last || last->ends_segment)
    return invalid_argument("end_segment: no source unit since the last segment end");
  last->ends_segment = true;
  last_unit_ends_segment_ = true;
  open_segment_words_ = 0;
  if (next_units_.empty()) source_finished_ = true;
  return {};
}

Status Session::end_source(std::optional<double> arrival_ms) {
  if (stream_finished_) return invalid_argument("end_source called twice");
  stream_finished_ = true;
  source_end_arrival_ms_ = arrival_ms;
  if (!opts_.continuous || next_units_.empty()) source_finished_ = true;
  return {};
}

PolicyState Session::policy_state() const {
  PolicyState ps(units_read_, words_written_, source_finished_, static_cast<int>(units_.size()),
                 deciding_end_ ? units_read_ : -1, confidence_);
  ps.agreement = agreement_;
  ps.attended_unit = attended_unit_;
  return ps;
}

Result<const std::vector<int32_t>*> Session::unit_tokens(int unit) {
  while (static_cast<int>(unit_ids_.size()) <= unit) {
    const int u = static_cast<int>(unit_ids_.size());
    if (u < static_cast<int>(units_.size()) && units_[u].n_rows > 0) {
      unit_ids_.emplace_back();  // audio chunk: rows, no ids
    } else if (u < static_cast<int>(units_.size())) {
      GPS_ASSIGN(auto ids, codec_.encode(SegmentKind::SourceWord, units_[u].word, u == 0));
      unit_ids_.push_back(std::move(ids));
    } else {
      unit_ids_.push_back(source_end_ids_);
    }
  }
  return &unit_ids_[unit];
}

Status Session::queue_unit(int unit) {
  const bool source_unit = unit < static_cast<int>(units_.size());
  if (source_unit && units_[unit].n_rows > 0) {
    for (int r = 0; r < units_[unit].n_rows; ++r) queue_source(0, unit, r);
  } else {
    GPS_ASSIGN(const std::vector<int32_t>* ids, unit_tokens(unit));
    for (int32_t id : *ids) queue_source(id);
  }
  ++units_read_;
  if (source_unit) {
    ++words_read_;
    source_ms_read_ += units_[unit].duration_ms;
  }
  return {};
}

Result<bool> Session::collect_reads(std::vector<int>& units) {
  units.clear();
  PolicyState ps = policy_state();
  while (policy_->decide(ps) == Action::Read) {
    const int next = ps.units_read;
    if (next > 0 && next < static_cast<int>(units_.size()) &&
        units_[static_cast<size_t>(next)].ask_sentence_end) {
      SourceUnit& u = units_[static_cast<size_t>(next)];
      std::optional<std::string_view> after;  // the word after `next`, the detector's lookahead
      if (opts_.sentence_end_lookahead && !u.ends_segment) {
        if (next + 1 < static_cast<int>(units_.size())) {
          after = units_[static_cast<size_t>(next) + 1].word;
        } else if (!source_finished_) {
          units.clear();
          return false;  // wait for it
        }
      }
      u.ask_sentence_end = false;
      GPS_ASSIGN(bool ends, model_ends_segment_before(next, after));
      if (ends) {  // the segment now ends before `next`: decide again on its new length
        ps.n_words = static_cast<int>(units_.size());
        ps.source_finished = source_finished_;
        continue;
      }
    }
    const bool available = next < static_cast<int>(units_.size()) ||
                           (next == static_cast<int>(units_.size()) && source_finished_);
    if (!available) {
      if (source_finished_) break;  // everything, end marker included, has been read
      units.clear();
      return false;
    }
    units.push_back(next);
    ++ps.units_read;
    ps.confidence.reset();  // no row has seen this unit yet
    ps.agreement.reset();   // nor a continuation
  }
  return true;
}

Result<bool> Session::model_ends_segment_before(int unit, std::optional<std::string_view> after) {
  SentenceEndDetector& d = *sentence_end_detector_;
  while (d.words() < unit) GPS_TRY(d.feed(units_[static_cast<size_t>(d.words())].word));
  auto ends = d.ends_before(units_[static_cast<size_t>(unit)].word, after);
  const int seen = unit + (after ? 2 : 1);  // units of the segment the decision looked at
  if (units_before_segment_ + seen > units_seen_) {
    units_seen_ = units_before_segment_ + seen;
    units_seen_arrival_ms_ = units_[static_cast<size_t>(seen - 1)].arrival_ms;
  }
  stats_.sentence_end_forwards = d.forwards();
  stats_.sentence_end_rows = d.rows_forwarded();
  if (!ends.ok() || !*ends) return ends;
  // units_[unit..] start the next segment (before any units already waiting there).
  const bool moved_closed = units_.back().ends_segment;
  for (size_t i = units_.size(); i-- > static_cast<size_t>(unit);)
    next_units_.push_front(std::move(units_[i]));
  units_.resize(static_cast<size_t>(unit));
  if (unit_ids_.size() > units_.size()) unit_ids_.resize(units_.size());
  units_.back().ends_segment = true;
  source_finished_ = true;
  detector_holds_next_segment_ = true;  // its context is now the prompt and units_[unit]
  // Without an end among them, the moved units were the open segment's and still are (next_units_ held
  // nothing: units wait there only behind a finished segment).
  if (!moved_closed) open_segment_words_ = static_cast<int>(next_units_.size());
  return true;
}

void Session::queue_source(int32_t id, int unit, int row) {
  const int src_rows = cache_.rows(model::Group::Source) + pending_src_;
  const int tgt_rows = cache_.rows(model::Group::Target) + pending_tgt_;
  const float pos =
      kept_position(opts_.positions_removed, model::Group::Source,
                    static_cast<float>(arrival_positions(opts_.paradigm) ? src_rows + tgt_rows : src_rows));
  const int n_tgt = source_sees_target(opts_.paradigm) ? tgt_rows : 0;
  pending_.push_back(
      {.id = id, .pos = pos, .group = model::Group::Source, .n_src = src_rows + 1, .n_tgt = n_tgt});
  pending_rows_.push_back({unit, row});
  ++pending_src_;
  ++stats_.source_tokens;
}

model::BatchToken Session::target_token(int32_t id, int idx, bool logits, bool attention) const {
  const int src_rows = cache_.rows(model::Group::Source) + pending_src_;
  float pos;
  if (arrival_positions(opts_.paradigm))
    pos = static_cast<float>(src_rows + idx);
  else if (phi_positions(opts_.paradigm))
    pos = phi_base_ + static_cast<float>(idx);
  else
    pos = static_cast<float>(src_rows + idx);
  return {.id = id,
          .pos = kept_position(opts_.positions_removed, model::Group::Target, pos),
          .group = model::Group::Target,
          .n_src = src_rows,
          .n_tgt = idx + 1,
          .logits = logits,
          .attention = attention};
}

void Session::queue_target(int32_t id, bool logits) {
  const int idx = cache_.rows(model::Group::Target) + pending_tgt_;
  pending_.push_back(target_token(id, idx, logits, logits && policy_->reads_attention()));
  pending_rows_.push_back({-1, -1});
  ++pending_tgt_;
  pending_logits_ = pending_logits_ || logits;
  ++stats_.target_tokens;
  row_label_.resize(idx + 1, -1);
  row_label_[idx] = -1;
}

Result<bool> Session::poll() {
  if (!pending_.empty()) return true;
  switch (state_) {
    case State::Finished:
      events_.push_back(make_event(EventKind::Finished));
      return false;
    case State::Decode:
      GPS_ASSERT(false, "Decode state without a pending forward");
      return false;
    case State::Start: {
      if (opts_.continuous && units_.empty() && stream_finished_) {
        // end_source right after a segment end: there is no segment left, not an empty one to decode.
        state_ = State::Finished;
        events_.push_back(make_event(EventKind::Finished));
        return false;
      }
      std::vector<int> units;
      GPS_ASSIGN(bool ready, collect_reads(units));
      if (!ready) {
        events_.push_back(make_event(EventKind::NeedSource));
        return false;
      }
      if (!prompt_fed_) {
        if (opts_.prompt_cache) {
          GPS_TRY(opts_.prompt_cache->copy_into(cache_));
          stats_.prompt_rows_copied += static_cast<int64_t>(prompt_ids_.size());
        } else {
          for (int32_t id : prompt_ids_) queue_source(id);
        }
        prompt_fed_ = true;
      }
      for (int u : units) GPS_TRY(queue_unit(u));
      confidence_.reset();
      agreement_.reset();
      attended_unit_.reset();
      phi_base_ = opts_.phi.source_length
                      ? static_cast<float>(cache_.rows(model::Group::Source) + pending_src_)
                      : opts_.phi.value;
      for (size_t i = 0; i < header_ids_.size(); ++i) {
        target_ids_.push_back(header_ids_[i]);
        queue_target(header_ids_[i], i + 1 == header_ids_.size());
      }
      if (header_ids_.empty()) return invalid_argument("the template's header encodes to no token");
      state_ = State::Decode;
      return true;
    }
    case State::NeedRead: {
      std::vector<int> units;
      GPS_ASSIGN(bool ready, collect_reads(units));
      if (!ready) {
        events_.push_back(make_event(EventKind::NeedSource));
        return false;
      }
      GPS_ASSERT(!units.empty(), "NeedRead without a unit to read");
      // Pop the last target token: its row must be recomputed after the read so it sees the new source.
      const int32_t last = target_ids_.back();
      cache_.truncate(model::Group::Target, cache_.rows(model::Group::Target) - 1);
      row_label_.resize(cache_.rows(model::Group::Target));
      for (int u : units) GPS_TRY(queue_unit(u));
      confidence_.reset();
      agreement_.reset();
      attended_unit_.reset();
      const int src_rows = cache_.rows(model::Group::Source) + pending_src_;
      if (opts_.paradigm == Paradigm::Reencode) {
        // Recompute every target row at its new position, seeing all the source read so far.
        cache_.truncate(model::Group::Target, 0);
        row_label_.clear();
        for (size_t i = 0; i < target_ids_.size(); ++i)
          queue_target(target_ids_[i], i + 1 == target_ids_.size());
        stats_.target_tokens -= static_cast<int64_t>(target_ids_.size());  // exempt from the forward count
      } else {
        if (opts_.paradigm == Paradigm::ReencodePos) {
          const int n = cache_.rows(model::Group::Target);
          std::vector<float> pos(n);
          for (int i = 0; i < n; ++i)
            pos[i] = kept_position(opts_.positions_removed, model::Group::Target,
                                   static_cast<float>(src_rows + i));
          cache_.rerotate(model::Group::Target, 0, pos.data(), n, model_.rope());
        }
        queue_target(last, true);
        --stats_.target_tokens;
        ++stats_.refeeds;
      }
      after_refeed_ = true;
      state_ = State::Decode;
      return true;
    }
  }
  return false;
}

int Session::prepare(model::Batch& batch, int seq, int max_rows) {
  const size_t E = static_cast<size_t>(model_.config().n_embd);
  prepared_ = std::min(pending_.size(), static_cast<size_t>(std::max(max_rows, 1)));
  for (size_t i = 0; i < prepared_; ++i) {
    model::BatchToken t = pending_[i];
    t.seq = seq;
    const auto [unit, row] = pending_rows_[i];
    if (unit < 0) {
      batch.tokens.push_back(t);
      continue;
    }
    const std::span<const float> input(units_[unit].rows.data() + static_cast<size_t>(row) * E, E);
    const int added = batch.add_embedded(
        input,
        {.pos = t.pos, .seq = seq, .group = t.group, .n_src = t.n_src, .n_tgt = t.n_tgt, .logits = t.logits});
    GPS_ASSERT(added >= 0,
               "a batch mixing input embedding rows of different widths (sessions of two models?)");
  }
  return static_cast<int>(prepared_);
}

bool Session::starts_word(int32_t id) const {
  return id < codec_.vocab_size() && codec_.starts_word(id);
}

bool Session::is_eos(int32_t id) const {
  if (id == eos_id_ || id >= codec_.vocab_size() || codec_.is_special(id)) return true;
  const auto& e = model_.config().eos_token_ids;
  return std::find(e.begin(), e.end(), id) != e.end();
}

Result<int32_t> Session::choose(const float* row, std::span<const int32_t> history, bool word_start) {
  const int32_t n_vocab = model_.config().n_vocab;
  int32_t y;
  if (opts_.forced_target) {
    const size_t i = history.size();
    y = i < opts_.forced_target->size() ? (*opts_.forced_target)[i] : eos_id_;
  } else {
    std::function<bool(int32_t)> allowed;
    if (word_start) {
      const std::vector<TokenKind>& kinds = token_kinds();
      allowed = [&kinds](int32_t id) { return kinds[id] != TokenKind::Inner; };  // a word start or the end
    }
    y = sampler_.choose(std::span<const float>(row, static_cast<size_t>(n_vocab)), history, allowed);
  }
  if (y < 0 || y >= n_vocab)
    return out_of_range("forced token " + std::to_string(y) + " outside the vocabulary");
  return y;
}

void Session::emit_current_word() {
  if (word_ids_.empty()) return;
  const std::string text = codec_.decode(word_ids_);
  const double now = now_ms();
  const double elapsed = now - t0_.value_or(now);
  const double stream_elapsed = now - stream_t0_.value_or(now);
  std::optional<double> arrival;
  if (words_read_ >= 1) arrival = units_[static_cast<size_t>(words_read_ - 1)].arrival_ms;
  // A sentence-end decision that looked at units beyond those read: the words written since depend on them.
  const bool seen_beyond = units_seen_ > units_before_segment_ + words_read_;
  if (seen_beyond) arrival = units_seen_arrival_ms_;
  // The end marker read is end_source's unless a unit's segment end put it there.
  const bool read_source_end =
      units_read_ > words_read_ && stream_finished_ && (units_.empty() || !units_.back().ends_segment);
  if (read_source_end && source_end_arrival_ms_)
    arrival = arrival ? std::max(*arrival, *source_end_arrival_ms_) : *source_end_arrival_ms_;
  for (std::string& w : tokenizer::split_words(text)) {
    Event e;
    e.kind = EventKind::Word;
    e.word = std::move(w);
    e.delay = words_read_;
    e.delay_ms = source_ms_read_;
    e.stream_delay = seen_beyond ? units_seen_ : units_before_segment_ + words_read_;
    e.stream_delay_ms = ms_before_segment_ + source_ms_read_;
    e.elapsed_ms = elapsed;
    e.stream_elapsed_ms = stream_elapsed;
    e.arrival_ms = arrival;
    e.segment_end_read = units_read_ > words_read_;
    events_.push_back(std::move(e));
  }
  word_ids_.clear();
  word_has_text_ = false;
  ++words_written_;
}

Status Session::complete(const float* row, std::span<const float> source_attention) {
  ++stats_.forwards;
  if (prepared_ < pending_.size()) {  // a piece of a longer run: its rows are in the cache, the rest wait
    for (size_t i = 0; i < prepared_; ++i) {
      GPS_ASSERT(!pending_[i].logits, "a row asking for logits before the last pending row");
      --(pending_[i].group == model::Group::Source ? pending_src_ : pending_tgt_);
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(prepared_));
    pending_rows_.erase(pending_rows_.begin(),
                        pending_rows_.begin() + static_cast<std::ptrdiff_t>(prepared_));
    prepared_ = 0;
    return {};
  }
  prepared_ = 0;
  pending_.clear();
  pending_rows_.clear();
  // The read chunks' rows are in the cache now and never forwarded again.
  for (; units_released_ < std::min(units_read_, static_cast<int>(units_.size())); ++units_released_)
    std::vector<float>().swap(units_[units_released_].rows);
  pending_src_ = pending_tgt_ = 0;
  const bool had_logits = pending_logits_;
  pending_logits_ = false;
  if (!had_logits) return {};
  if (opts_.beam > 1 && !opts_.forced_target) {
    if (policy_->reads_attention()) attended_unit_ = attended_unit(source_attention);
    return complete_beam(row);
  }
  // local-agreement: every row with logits before the whole source is read is a word start after a read
  // (the header's, or a re-feed's); it decodes a tentative continuation there.
  const bool everything_read = source_finished_ && units_read_ > static_cast<int>(units_.size());
  if (policy_->local_agreement() && !everything_read && (after_refeed_ || generated_.empty()) &&
      static_cast<int>(generated_.size()) < opts_.max_target_tokens)
    return complete_agreement(row);
  // After a re-feed the popped token ended a word, so the next one starts a word. An adaptive policy also
  // re-feeds the header's last token before the first word, which may start with any token; wait-k re-feeds
  // there only for an early end marker (end_after_source), restricted as always.
  const bool word_ended = after_refeed_ && (!generated_.empty() || !policy_->adaptive());
  GPS_ASSIGN(
      const int32_t y,
      choose(row, generated_, word_ended || static_cast<int>(word_ids_.size()) >= opts_.max_tokens_per_word));
  row_label_[cache_.rows(model::Group::Target) - 1] = y;
  // The first row of a sentence and a re-feed's row choose the first token of the next word (or the end):
  // an adaptive policy decides there too, on the logits that have seen the units just read.
  const bool adaptive = policy_->adaptive();
  const bool word_start_row = adaptive && (after_refeed_ || generated_.empty());
  after_refeed_ = false;
  const bool eos = is_eos(y);
  const bool boundary = eos || (starts_word(y) && word_has_text_) || word_start_row;
  if (boundary) {
    emit_current_word();
    deciding_end_ = eos;
    if (adaptive)
      confidence_ =
          std::exp(log_prob(std::span<const float>(row, static_cast<size_t>(model_.config().n_vocab)), y));
    if (policy_->reads_attention()) attended_unit_ = attended_unit(source_attention);
    if (policy_->decide(policy_state()) == Action::Read) {
      state_ = State::NeedRead;
      return {};
    }
    if (eos) {
      finish_sentence(false);
      return {};
    }
  }
  if (static_cast<int>(generated_.size()) >= opts_.max_target_tokens) {
    emit_current_word();
    finish_sentence(true);
    return {};
  }
  word_ids_.push_back(y);
  if (!word_has_text_) word_has_text_ = !is_blank(codec_.decode(word_ids_));
  generated_.push_back(y);
  target_ids_.push_back(y);
  queue_target(y, true);
  return {};
}

// Word beam search: a logits row either follows a word the search chose (a word boundary: emit it, and
// the policy may read) or starts a search (after the header, a boundary without a read, or a re-feed).
// An adaptive policy decides after the search instead, on the chosen word's probability (every search
// starts a word): a read drops the word and searches again on the new logits.
Status Session::complete_beam(const float* row) {
  const bool adaptive = policy_->adaptive();
  if (word_fed_) {
    word_fed_ = false;
    emit_current_word();
    deciding_end_ = false;
    if (!adaptive && policy_->decide(policy_state()) == Action::Read) {
      state_ = State::NeedRead;
      return {};
    }
    if (static_cast<int>(generated_.size()) >= opts_.max_target_tokens) {
      finish_sentence(true);
      return {};
    }
  }
  GPS_ASSIGN(WordChoice c, search_next_word(row));
  after_refeed_ = false;
  const int last_row = cache_.rows(model::Group::Target) - 1;
  if (adaptive) {
    deciding_end_ = c.end;
    confidence_ = std::exp(c.log_prob);
    if (policy_->decide(policy_state()) == Action::Read) {
      state_ = State::NeedRead;
      return {};
    }
    if (c.end) {
      row_label_[last_row] = eos_id_;
      finish_sentence(false);
      return {};
    }
  } else if (c.end) {
    row_label_[last_row] = eos_id_;
    deciding_end_ = true;
    if (policy_->decide(policy_state()) == Action::Read) {
      state_ = State::NeedRead;
      return {};
    }
    finish_sentence(false);
    return {};
  }
  // Feed the word in one forward; its last row's logits come back to the boundary branch above.
  row_label_[last_row] = c.ids[0];
  for (size_t i = 0; i < c.ids.size(); ++i) {
    const int32_t y = c.ids[i];
    word_ids_.push_back(y);
    generated_.push_back(y);
    target_ids_.push_back(y);
    queue_target(y, i + 1 == c.ids.size());
    if (i + 1 < c.ids.size()) row_label_[last_row + 1 + static_cast<int>(i)] = c.ids[i + 1];
  }
  word_has_text_ = true;
  word_fed_ = true;
  return {};
}

Status Session::complete_agreement(const float* row) {
  const int base = cache_.rows(model::Group::Target);
  const size_t budget = static_cast<size_t>(opts_.max_target_tokens) - generated_.size();
  after_refeed_ = false;
  deciding_end_ = false;
  std::vector<int32_t> history = generated_;  // the sampler is greedy here: create() refuses a temperature
  // The continuation: at most max_lag whole words (a word is whole once the next word's first token or the
  // end marker is chosen; neither is forwarded), within the sentence's token budget. Its rows go into the
  // cache one forward per token; those of the words written stay, the others are dropped below.
  std::vector<std::vector<int32_t>> words;
  std::vector<int32_t> word, tokens;
  bool has_text = false;
  Result<int32_t> y = choose(row, history, !generated_.empty());
  Status st;
  while (y.ok()) {
    if (is_eos(*y)) break;
    if (starts_word(*y) && has_text) {
      words.push_back(std::move(word));
      word.clear();
      has_text = false;
      if (static_cast<int>(words.size()) >= opts_.policy.max_lag) break;
    }
    if (tokens.size() >= budget) break;
    word.push_back(*y);
    tokens.push_back(*y);
    history.push_back(*y);
    if (!has_text) has_text = !is_blank(codec_.decode(word));
    model::Batch batch;
    batch.tokens.push_back(target_token(*y, base + static_cast<int>(tokens.size()) - 1, true));
    model::KvCache* c = &cache_;
    st = model_.forward(batch, std::span<model::KvCache* const>(&c, 1), tentative_logits_);
    if (!st.ok()) break;
    ++stats_.tentative_forwards;
    y = choose(tentative_logits_.data(), history, static_cast<int>(word.size()) >= opts_.max_tokens_per_word);
  }
  if (st.ok() && !y.ok()) st = y.error();
  if (!st.ok()) {
    cache_.truncate(model::Group::Target, base);
    return st;
  }
  if (!word.empty()) words.push_back(std::move(word));  // ended by the end marker or the token budget
  std::vector<std::string> texts;
  for (const auto& w : words) texts.push_back(codec_.decode(w));
  // Agreed: the words the last `agreement` − 1 continuations all begin with too (none before there are as
  // many: a sentence's first continuation agrees with nothing).
  const size_t n_previous = static_cast<size_t>(opts_.policy.agreement) - 1;
  int agreed = 0;
  if (previous_continuations_.size() >= n_previous) {
    agreed = static_cast<int>(texts.size());
    for (const auto& prev : previous_continuations_) {
      int common = 0;
      while (common < std::min(agreed, static_cast<int>(prev.size())) && texts[common] == prev[common])
        ++common;
      agreed = common;
    }
  }
  // Write while the policy says so: the agreed words, and at max_lag the continuation's next ones.
  const int n_words = static_cast<int>(words.size());
  int written = 0;
  size_t kept = 0;  // tokens of the words written
  agreement_ = PolicyState::Agreement{agreed, n_words};
  while (policy_->decide(policy_state()) == Action::Write) {
    GPS_ASSERT(written < n_words, "local-agreement writing past its continuation");
    for (int32_t id : words[written]) {
      word_ids_.push_back(id);
      generated_.push_back(id);
      target_ids_.push_back(id);
    }
    kept += words[written].size();
    word_has_text_ = true;
    emit_current_word();
    ++written;
    agreement_ = PolicyState::Agreement{std::max(agreed - written, 0), n_words - written};
  }
  cache_.truncate(model::Group::Target, base + static_cast<int>(kept));
  stats_.target_tokens += static_cast<int64_t>(kept);
  stats_.tentative_rows += static_cast<int64_t>(tokens.size() - kept);
  row_label_.resize(static_cast<size_t>(base) + kept, -1);
  row_label_[base - 1] = tokens.empty() ? *y : tokens[0];
  for (size_t i = 1; i < kept; ++i) row_label_[base - 1 + i] = tokens[i];
  Event e;
  e.kind = EventKind::Tentative;
  for (int i = written; i < n_words; ++i)
    for (std::string& w : tokenizer::split_words(texts[i])) e.words.push_back(std::move(w));
  events_.push_back(std::move(e));
  for (auto& prev : previous_continuations_)
    prev.erase(prev.begin(), prev.begin() + std::min<std::ptrdiff_t>(written, std::ssize(prev)));
  previous_continuations_.emplace_back(std::make_move_iterator(texts.begin() + written),
                                       std::make_move_iterator(texts.end()));
  if (previous_continuations_.size() > n_previous) previous_continuations_.pop_front();
  state_ = State::NeedRead;
  return {};
}

const std::vector<TokenKind>& Session::token_kinds() {
  if (token_kinds_.empty()) {  // built on first use: forced sessions (training layouts) never need it
    const int32_t n_vocab = model_.config().n_vocab;
    token_kinds_.resize(static_cast<size_t>(n_vocab));
    for (int32_t id = 0; id < n_vocab; ++id)
      token_kinds_[id] = is_eos(id)        ? TokenKind::End
                         : starts_word(id) ? TokenKind::WordStart
                                           : TokenKind::Inner;
  }
  return token_kinds_;
}

Result<WordChoice> Session::search_next_word(const float* row) {
  const int32_t n_vocab = model_.config().n_vocab;
  const int base = cache_.rows(model::Group::Target);
  // A hypothesis's rows go into the cache for one forward and are dropped again.
  auto logits_after = [&](std::span<const int32_t> ids) -> Result<std::span<const float>> {
    model::Batch batch;
    for (size_t i = 0; i < ids.size(); ++i)
      batch.tokens.push_back(target_token(ids[i], base + static_cast<int>(i), i + 1 == ids.size()));
    model::KvCache* c = &cache_;
    const Status st = model_.forward(batch, std::span<model::KvCache* const>(&c, 1), search_logits_);
    cache_.truncate(model::Group::Target, base);
    GPS_TRY(st);
    ++stats_.search_forwards;
    stats_.search_rows += static_cast<int64_t>(ids.size());
    return std::span<const float>(search_logits_.data(), static_cast<size_t>(n_vocab));
  };
  auto has_text = [&](std::span<const int32_t> ids) { return !is_blank(codec_.decode(ids)); };
  WordBeamOptions wo;
  wo.beam = opts_.beam;
  wo.max_tokens =
      std::min(opts_.max_tokens_per_word, opts_.max_target_tokens - static_cast<int>(generated_.size()));
  // As in choose(): an adaptive policy's re-feed before the first word does not make it start a word.
  wo.first_must_start_word = words_written_ > 0 || (after_refeed_ && !policy_->adaptive());
  return search_word(std::span<const float>(row, static_cast<size_t>(n_vocab)), logits_after, has_text,
                     token_kinds(), wo);
}

void Session::finish_sentence(bool truncated) {
  if (!opts_.continuous) {
    state_ = State::Finished;
    events_.push_back(make_event(EventKind::Finished, truncated));
    return;
  }
  // The units the model did not read (it ended the segment early, or hit max_target_tokens) are not
  // dropped: they start the next segment, in order, their segment end kept.
  std::vector<SourceUnit> carried(std::make_move_iterator(units_.begin() + words_read_),
                                  std::make_move_iterator(units_.end()));
  Event e = make_event(EventKind::SegmentEnd, truncated);
  e.units_carried = static_cast<int>(carried.size());
  events_.push_back(std::move(e));
  start_segment(std::move(carried));
}

void Session::start_segment(std::vector<SourceUnit> carried) {
  // Drop the finished sentence's rows, keeping the prompt: the next sentence starts again at source
  // position P and target position φ, exactly like a fresh session.
  const int p = static_cast<int>(prompt_ids_.size());
  cache_.erase(model::Group::Source, p, cache_.rows(model::Group::Source));
  cache_.truncate(model::Group::Target, 0);
  cache_.shrink(p + kSegmentCacheRows);
  units_before_segment_ += words_read_;
  ms_before_segment_ += source_ms_read_;
  units_.clear();
  unit_ids_.clear();
  units_read_ = words_read_ = words_written_ = units_released_ = 0;
  deciding_end_ = false;
  confidence_.reset();
  agreement_.reset();
  attended_unit_.reset();
  previous_continuations_.clear();
  source_ms_read_ = 0;
  target_ids_.clear();
  generated_.clear();
  word_ids_.clear();
  word_has_text_ = false;
  word_fed_ = false;
  after_refeed_ = false;
  row_label_.clear();
  t0_.reset();
  source_finished_ = false;
  // The detector's context goes on into the segment it cut, unless units carried over come first.
  if (sentence_end_detector_ && !(detector_holds_next_segment_ && carried.empty()))
    sentence_end_detector_->reset();
  detector_holds_next_segment_ = false;
  for (auto it = carried.rbegin(); it != carried.rend(); ++it) next_units_.push_front(std::move(*it));
  while (!next_units_.empty() && !source_finished_) {
    if (!t0_) t0_ = now_ms();
    units_.push_back(std::move(next_units_.front()));
    next_units_.pop_front();
    if (units_.back().ends_segment) source_finished_ = true;
  }
  if (stream_finished_ && next_units_.empty()) source_finished_ = true;
  if (stream_finished_ && units_.empty()) {
    state_ = State::Finished;
    events_.push_back(make_event(EventKind::Finished));
    return;
  }
  state_ = State::Start;
}

Event Session::pop_event() {
  Event e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<int> Session::attended_unit(std::span<const float> attention) const {
  const model::ModelConfig& c = model_.config();
  const size_t per_head = static_cast<size_t>(c.n_layer) * static_cast<size_t>(c.n_head);
  if (attention.empty() || attention.size() % per_head != 0) return std::nullopt;  // no tap: write
  const size_t n_src = attention.size() / per_head;
  const size_t first = prompt_ids_.size();  // the segment's first unit row
  if (n_src <= first) return -1;
  // Summed over the chosen layers and all their heads, in double.
  std::vector<double> sum(n_src - first, 0.0);
  auto add_layer = [&](int l) {
    for (int h = 0; h < c.n_head; ++h) {
      const float* p =
          attention.data() +
          (static_cast<size_t>(l) * static_cast<size_t>(c.n_head) + static_cast<size_t>(h)) * n_src;
      for (size_t r = first; r < n_src; ++r) sum[r - first] += p[r];
    }
  };
  if (opts_.policy.layers.empty())
    for (int l = 0; l < c.n_layer; ++l) add_layer(l);
  else
    for (int l : opts_.policy.layers) add_layer(l);
  const size_t peak = static_cast<size_t>(std::max_element(sum.begin(), sum.end()) - sum.begin());
  // The unit of that row: units in reading order, each its rows (audio) or its tokens (text); the end
  // marker's rows after the words.
  size_t row = 0;
  for (int u = 0; u < units_read_; ++u) {
    const size_t n = u < static_cast<int>(units_.size()) && units_[static_cast<size_t>(u)].n_rows > 0
                         ? static_cast<size_t>(units_[static_cast<size_t>(u)].n_rows)
                         : unit_ids_[static_cast<size_t>(u)].size();
    if (peak < row + n) return u;
    row += n;
  }
  return units_read_ - 1;
}

Result<Event> Session::step() {
  for (;;) {
    if (!events_.empty()) return pop_event();
    GPS_ASSIGN(bool forward, poll());
    if (!events_.empty() && !forward) return pop_event();
    if (!forward) continue;
    model::Batch batch;
    prepare(batch, 0);
    model::KvCache* c = &cache_;
    GPS_TRY(model_.forward(batch, std::span<model::KvCache* const>(&c, 1), logits_));
    GPS_TRY(complete(logits_.data(),
                     prepared_wants_attention() ? model_.source_attention(0) : std::span<const float>()));
  }
}

}  // namespace gpstream::stream
