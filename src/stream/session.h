// Session: one live stream (gpe.md §5). Source units arrive with push_source (words) or
// push_source_embeddings (audio chunks), then end_source; step() runs the read/write loop until something
// happens and returns it as an event: a target word (text, delay in source units, elapsed ms), NeedSource
// (the policy wants a unit that has not arrived), or Finished.
// The cache has a source region and a target region; the paradigm (paradigm.h) decides positions,
// visibility and what a read recomputes; the policy decides when to read. Nothing is re-encoded in the
// group paradigm: a read appends source rows, and the last target token is re-fed so its row sees them.
//
// Source units are text words (push_source) or, for speech, chunks of input embedding rows
// (push_source_embeddings: one call = one unit = one audio chunk). Only where a unit's source rows come
// from differs — token ids of the encoded word, or the chunk's rows as they are —: policies count units
// (wait-k counts chunks), and every paradigm, the layout function, continuous streams and the Scheduler
// treat both kinds alike. One session takes one kind (docs/speech.md, audio sources in Sessions).
//
// A Session owns its cache and decoding state but no weights. The forward pass is either run by step()
// itself or, through prepare()/complete(), batched with other sessions by the Scheduler.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/forward_model.h"
#include "stream/codec.h"
#include "stream/paradigm.h"
#include "stream/policy.h"
#include "stream/prompt_cache.h"
#include "stream/sampler.h"
#include "stream/sentence_ends.h"
#include "stream/word_beam.h"

namespace gpstream::stream {

// The default of SessionOptions::max_segment_words: above the longest source sentence of the
// training corpora (80 words; 99 % have at most 43), so sentences are cut only when nothing ends them.
constexpr int kDefaultMaxSegmentWords = 64;

struct SessionOptions {
  Paradigm paradigm = Paradigm::Group;
  Phi phi;
  int k = 5;  // wait-k (ignored by offline, which reads everything first)
  // The read/write policy (policy.h): wait-k (with k above) by default, confidence with its tau and lag
  // range, or local-agreement with its lag range; offline ignores it. Confidence and local-agreement run
  // with the group, batch-stream and interleaved-blocked paradigms only; local-agreement needs greedy
  // decoding (no temperature) and beam 1.
  PolicySpec policy;
  // Groups whose rows all sit at position 0 (the paper's Table 2 ablation; gpstream.json's
  // "positions_removed"). With the source's positions removed the prompt cache and the model's sentence
  // ends (both computed at the source's positions) are not used.
  PositionsRemoved positions_removed = PositionsRemoved::None;
  // The target end marker only once the whole source (its end marker included) is read, instead of
  // wait-k's min(k + N, M + 1) units: when the model ends early, the rest is read and it decides again.
  // For audio sources (a transcript ends with the audio); gpstream.json's "end_after_source".
  bool end_after_source = false;
  DecodingOptions decoding;
  // Word beam search (word_beam.h): each word is chosen as the most probable whole word among `beam`
  // hypotheses grown token by token. 1 = token by token (greedy, or sampled with `decoding`). Above 1 only
  // with greedy decoding (temperature 0, no repetition penalty); forced decoding ignores it.
  int beam = 1;
  int max_tokens_per_word = 32;  // then only a word start or the end marker may follow
  int max_target_tokens = 256;   // per sentence; then the sentence ends (event.truncated)
  int max_cache_rows = 8192;     // per region
  // Continuous streams: a source word ending in . ! ? (optionally followed by closing quotes or
  // brackets) ends the sentence; the session translates sentence by sentence, dropping finished
  // sentences' rows (keeping the prompt), so memory stays bounded. No source word is ever dropped: text
  // with no sentence end is cut into segments at word boundaries (segment_ends_at), and the words of a
  // segment the model ended before reading them (its end marker, or max_target_tokens) start the next one.
  bool continuous = false;
  // Continuous text streams: a segment ends at its max_segment_words-th word, or earlier at a word ending
  // a clause (, ; :) once it has 3/4 of that (segment_ends_at). 0: only sentence ends and end_segment().
  int max_segment_words = kDefaultMaxSegmentWords;
  // Continuous text streams: sentence ends decided by the model where the text has no punctuation
  // (sentence_ends.h). Once model_sentence_ends_after words in a row held no sentence end, the model decides
  // before reading each further word whether a sentence ended after the word before, from that word (and
  // the one after it, with sentence_end_lookahead); the next sentence end in the text hands the decision
  // back to the punctuation. Must have been built for this model and this codec's prompt. Null: off (only
  // punctuation, the word limit and end_segment() end segments). StreamingModel::sentence_ends() builds it.
  std::shared_ptr<const SentenceEndModel> sentence_ends;
  int model_sentence_ends_after = kDefaultModelSentenceEndsAfter;
  // The log-odds by which a sentence end must win (sentence_ends.h), a finite number.
  double sentence_end_bias = kDefaultSentenceEndBias;
  // Whether the model also sees the word after the one it decides before (one word of lookahead: that word
  // waits for the next one to arrive, unless the stream has ended). Finds sentence ends far more reliably
  // (docs/streaming.md, "Sentence ends without punctuation").
  bool sentence_end_lookahead = true;
  // Forced decoding (tests, the training layout): instead of choosing, take these target tokens in
  // order; after them, the end marker.
  std::optional<std::vector<int32_t>> forced_target;
  // The prompt's rows computed once (prompt_cache.h), copied into this session's cache instead of being
  // forwarded; must have been built for this model and this codec's prompt. Null: the session forwards them.
  std::shared_ptr<const PromptCache> prompt_cache;
  // Milliseconds since an arbitrary origin; steady clock by default (tests and paced runs inject one).
  std::function<double()> clock;
};

// Tentative (local-agreement sessions only): after each tentative decode, the words of its continuation
// beyond the words written so far (possibly none); they replace those of the previous Tentative event, and a
// Word, SegmentEnd or Finished event makes them stale. Nothing else depends on them: a consumer may ignore
// them.
enum class EventKind { Word, NeedSource, SegmentEnd, Finished, Tentative };

struct Event {
  EventKind kind = EventKind::NeedSource;
  std::string word;       // Word: the target word
  int delay = 0;          // Word: source units (words or audio chunks) read when it was written
  double delay_ms = 0;    // Word: summed duration_ms of those units (audio; 0 for text)
  double elapsed_ms = 0;  // Word: ms since the sentence's first source word was pushed
  // Word: like delay and delay_ms, but counted from the stream's first source unit (continuous streams:
  // the units of earlier segments included; otherwise equal to them). With model-decided sentence ends
  // (SessionOptions::sentence_ends), stream_delay also counts the units a decision before it looked at
  // beyond those read (the word decided before, and with lookahead the one after it), and arrival_ms is then
  // the last of those units'.
  int stream_delay = 0;
  double stream_delay_ms = 0;
  double stream_elapsed_ms = 0;  // Word: ms since the stream's first source unit was pushed
  // Word: the arrival time given with the delay-th unit of its segment (the last one it read); when it read
  // the end marker that end_source() added, the later of that and end_source's arrival time. Unset where
  // no such time was given (no unit read, or units pushed without one).
  std::optional<double> arrival_ms;
  // Word: written after the end marker of its segment was read (the source units read are then
  // stream_delay words plus that marker: the unit count of the paper's lagging code, eval/latency.h).
  bool segment_end_read = false;
  bool truncated = false;  // Finished/SegmentEnd: stopped by max_target_tokens
  // SegmentEnd: source units of the segment it had not read, which start the next segment instead.
  int units_carried = 0;
  std::vector<std::string> words;  // Tentative: the tentative words, in order
};

// Counts of forwarded rows (gpe.md §8.3).
struct SessionStats {
  int64_t source_tokens = 0;
  int64_t target_tokens = 0;
  int64_t refeeds = 0;
  int64_t forwards = 0;
  int64_t prompt_rows_copied = 0;  // from SessionOptions::prompt_cache, not forwarded
  int64_t search_forwards = 0;     // word beam search: forwards of hypotheses (their rows are dropped again)
  int64_t search_rows = 0;         //   and the rows they forwarded
  int64_t sentence_end_forwards = 0;  // SessionOptions::sentence_ends: the detector's forwards
  int64_t sentence_end_rows = 0;      //   and its rows (a second pass over the source words it judged)
  // local-agreement: forwards of tentative continuations (one token each) and their rows; the rows of the
  // words it then writes stay in the cache and count as target_tokens instead, the others are dropped.
  int64_t tentative_forwards = 0;
  int64_t tentative_rows = 0;
};

class Session {
 public:
  Session(model::ForwardModel& model, const SegmentCodec& codec, SessionOptions options);
  static Result<std::unique_ptr<Session>> create(model::ForwardModel& model, const SegmentCodec& codec,
                                                 SessionOptions options);
  // The most memory a session's KV cache may take (create checks it against util/memory_budget.h):
  // max_cache_rows per region × 2 regions × layers × KV width × 2 (K and V) × 4 bytes, saturating.
  static uint64_t worst_case_cache_bytes(const model::ModelConfig& config, int max_cache_rows);

  // Adds whitespace-separated source words (any number, at any time before end_source). `arrival_ms`
  // (any clock; optional here and in the calls below) is when they arrived: Word events hand it back.
  Status push_source(std::string_view text, std::optional<double> arrival_ms = std::nullopt);
  // Adds one audio source unit: rows.size() / row_width input embedding rows (row-major, in the space of
  // the model's embedding table; row_width must be n_embd) covering duration_ms of audio. Refused, with
  // the session unchanged: a width other than n_embd, no rows, a size that is not whole rows, non-finite
  // values, a negative or non-finite duration, a push after end_source, a session that took text words.
  Status push_source_embeddings(std::span<const float> rows, int row_width, double duration_ms = 0.0,
                                std::optional<double> arrival_ms = std::nullopt);
  // Continuous streams: whether the source unit pushed last ended its segment (a sentence end, the word
  // limit or end_segment()).
  bool last_unit_ends_segment() const { return last_unit_ends_segment_; }
  // Continuous streams: the unit pushed last ends its segment (an utterance end for audio, where no
  // punctuation can tell). Refused in other sessions and when no unit came since the last segment end.
  Status end_segment();
  // The source has ended: the end marker becomes available as the last unit.
  Status end_source(std::optional<double> arrival_ms = std::nullopt);
  // Runs forwards until an event. After Finished, step() keeps returning Finished.
  Result<Event> step();

  // Scheduler interface: advance the state machine without a forward. Returns true when a forward is
  // pending (then append it with prepare() and hand back its logits row with complete()).
  Result<bool> poll();
  bool has_event() const { return !events_.empty(); }
  Event pop_event();
  // Appends the pending rows to `batch` as sequence `seq`, at most max_rows of them: a longer pending run
  // (a long sentence's source, a re-encoded target) is forwarded in pieces over several forwards, its first
  // max_rows rows now and the rest at the next poll(). Only the last pending row asks for logits, so a piece
  // that is not the last asks for none. Returns the number of rows appended.
  int prepare(model::Batch& batch, int seq, int max_rows = std::numeric_limits<int>::max());
  // Whether the rows of the last prepare() include the one that asks for logits.
  bool prepared_wants_logits() const { return prepared_ == pending_.size() && pending_logits_; }
  // Whether that row also asks for its attention (the alignatt policy; model::BatchToken::attention).
  bool prepared_wants_attention() const { return prepared_wants_logits() && policy_->reads_attention(); }
  // After the forward of the rows of the last prepare(): the logits row when they asked for one, and that
  // row's model::ForwardModel::source_attention when it asked for it.
  Status complete(const float* logits_row, std::span<const float> source_attention = {});

  model::KvCache& cache() { return cache_; }
  const model::KvCache& cache() const { return cache_; }
  const SessionStats& stats() const { return stats_; }
  bool finished() const { return state_ == State::Finished; }
  int units_read() const { return units_read_; }
  // Source units read, the end marker excluded (words or audio chunks).
  int words_read() const { return words_read_; }
  // Summed duration_ms of the source units read (the current sentence's in continuous streams).
  double source_ms_read() const { return source_ms_read_; }
  // Source units read since the stream started, earlier segments included (words_read() counts the
  // current segment's only).
  int stream_words_read() const { return units_before_segment_ + words_read_; }
  // Source units pushed that are not yet part of a finished segment (read or not): what is left to translate.
  int64_t source_units_waiting() const { return static_cast<int64_t>(units_.size() + next_units_.size()); }
  // The source token bound of a unit: a word's bytes + 1 (no tokenizer gives a word more tokens), an audio
  // chunk's rows.
  static int64_t source_bound(std::string_view word) { return static_cast<int64_t>(word.size()) + 1; }
  // Summed source_bound of the segment still being received: the units pushed after the last one that
  // ends a segment (continuous streams), or all units (otherwise). 0 right after a segment end.
  int64_t open_segment_source_bound() const;
  // For each target row: the token chosen from that row's last logits (-1 if none): the training
  // label of the row (stream/layout.h).
  const std::vector<int32_t>& target_row_labels() const { return row_label_; }
  const SessionOptions& options() const { return opts_; }

 private:
  enum class State { Start, Decode, NeedRead, Finished };
  enum class SourceKind { Unknown, Text, Embeddings };

  // One source unit: a text word, or an audio chunk's embedding rows (n_embd floats each).
  struct SourceUnit {
    std::string word;
    std::vector<float> rows;
    int n_rows = 0;  // audio chunks; 0 for words
    double duration_ms = 0;
    bool ends_segment = false;  // continuous streams: the last unit of its segment
    // Continuous text with SessionOptions::sentence_ends: the model is yet to decide whether a sentence
    // ends before this word (asked once, when the word is about to be read).
    bool ask_sentence_end = false;
    std::optional<double> arrival_ms;
  };

  PolicyState policy_state() const;
  Result<bool> collect_reads(std::vector<int>& units);  // false: a wanted unit has not arrived
  // SessionOptions::sentence_ends: whether the model ends a sentence between units unit − 1 and unit of
  // the current segment (unit ≥ 1); then the segment ends there and the units from `unit` on start the next.
  // `after`: the word after units_[unit], the detector's lookahead (SessionOptions::sentence_end_lookahead).
  Result<bool> model_ends_segment_before(int unit, std::optional<std::string_view> after);
  void add_unit(SourceUnit unit);
  Result<const std::vector<int32_t>*> unit_tokens(int unit);
  Status queue_unit(int unit);
  void queue_source(int32_t id, int unit = -1, int row = -1);
  void queue_target(int32_t id, bool logits);
  // The batch row of target token `id` at target row `idx` (positions and visibility of the paradigm).
  // `attention`: the row asks for the attention tap (only rows whose decision the policy reads do; the
  // tentative and word-search rows never).
  model::BatchToken target_token(int32_t id, int idx, bool logits, bool attention = false) const;
  // The next token after `history` (the target tokens so far): the forced target's, else the sampler's,
  // restricted to a word start or the end marker when `word_start` (an error for a forced id outside the
  // vocabulary).
  Result<int32_t> choose(const float* logits_row, std::span<const int32_t> history, bool word_start);
  // What each vocabulary id does to a word (word_beam.h), built on first use.
  const std::vector<TokenKind>& token_kinds();
  // Word beam search (opts_.beam > 1): complete() for a logits row.
  Status complete_beam(const float* row);
  Result<WordChoice> search_next_word(const float* row);
  // local-agreement: complete() for a word-start row after a read, before the whole source is read: decode
  // a tentative continuation, write the words it agrees on with the previous one, emit the rest as
  // Tentative, and read.
  Status complete_agreement(const float* row);
  // PolicyState::attended_unit from the row's attention tap (empty without one).
  std::optional<int> attended_unit(std::span<const float> attention) const;
  void emit_current_word();
  void finish_sentence(bool truncated);
  // Starts the next segment; `carried` unread units of the finished one come first.
  void start_segment(std::vector<SourceUnit> carried);
  bool is_eos(int32_t id) const;
  bool starts_word(int32_t id) const;
  double now_ms() const;

  model::ForwardModel& model_;
  const SegmentCodec& codec_;
  SessionOptions opts_;
  std::unique_ptr<Policy> policy_;
  Sampler sampler_;
  model::KvCache cache_;

  std::vector<int32_t> prompt_ids_, header_ids_, source_end_ids_;
  int32_t eos_id_ = -1;
  std::vector<TokenKind> token_kinds_;  // per vocabulary id: inner, word start or end marker (token_kinds())
  std::vector<float> search_logits_;

  // Current sentence.
  State state_ = State::Start;
  SourceKind source_kind_ = SourceKind::Unknown;
  std::vector<SourceUnit> units_;      // source units of this sentence
  std::deque<SourceUnit> next_units_;  // continuous mode: units of later sentences
  int open_segment_words_ = 0;         // continuous text: words pushed since the last segment end
  int words_since_sentence_end_ = 0;   // continuous text: words pushed since the last one ending a sentence
  std::unique_ptr<SentenceEndDetector> sentence_end_detector_;  // SessionOptions::sentence_ends
  // The detector cut the segment: its context already holds the next segment's first word.
  bool detector_holds_next_segment_ = false;
  // Units of the stream the detector's decisions looked at (the unit decided before, and the one after it
  // with lookahead), and the last one's arrival: a word written after such a decision has them as its delay
  // when they are more than the units read (Event::stream_delay).
  int units_seen_ = 0;
  std::optional<double> units_seen_arrival_ms_;
  bool last_unit_ends_segment_ = false;
  int units_before_segment_ = 0;                 // continuous mode: units read in earlier segments
  double ms_before_segment_ = 0;                 //   and their summed duration_ms
  bool source_finished_ = false;                 // this sentence's source has ended
  bool stream_finished_ = false;                 // end_source() was called (continuous mode)
  std::optional<double> source_end_arrival_ms_;  // given to end_source()
  std::vector<std::vector<int32_t>> unit_ids_;
  int units_read_ = 0, words_read_ = 0;
  int units_released_ = 0;  // units whose audio rows were freed after their forward
  double source_ms_read_ = 0;
  bool prompt_fed_ = false;
  float phi_base_ = 0.0f;
  std::vector<int32_t> target_ids_;  // header + fed generated tokens
  std::vector<int32_t> generated_;   // generated tokens (for the repetition penalty)
  std::vector<int32_t> word_ids_;    // the word being written
  bool word_has_text_ = false;
  int words_written_ = 0;
  bool after_refeed_ = false;
  bool deciding_end_ = false;  // the last boundary's candidate was the end marker
  // Adaptive policies: the probability of what the last decision row was about to commit; empty once a
  // unit has been read after it (PolicyState::confidence).
  std::optional<double> confidence_;
  std::optional<int> attended_unit_;  // PolicyState::attended_unit
  // local-agreement: the words (decoded text) of the last `agreement` − 1 tentative continuations beyond
  // the words written since each, oldest first, none before the sentence's first; and the agreement of the
  // last decision (PolicyState::agreement), empty once a unit has been read after it.
  std::deque<std::vector<std::string>> previous_continuations_;
  std::optional<PolicyState::Agreement> agreement_;
  std::vector<float> tentative_logits_;
  bool word_fed_ = false;  // word beam search: the pending forward feeds a chosen word
  std::optional<double> t0_;
  std::optional<double> stream_t0_;  // the stream's first unit was pushed
  std::vector<int32_t> row_label_;

  // Pending forward.
  std::vector<model::BatchToken> pending_;
  std::vector<std::pair<int, int>>
      pending_rows_;  // per pending token: (unit, row) of an audio row, or (-1, -1)
  int pending_src_ = 0, pending_tgt_ = 0;
  bool pending_logits_ = false;
  size_t prepared_ = 0;  // pending rows appended to the batch by the last prepare()

  std::deque<Event> events_;
  SessionStats stats_;
  std::vector<float> logits_;
};

// A policy spec that a session with `paradigm` can run: a valid spec (validate_policy), and a policy other
// than wait-k (confidence, local-agreement) only with the group, batch-stream and interleaved-blocked
// paradigms.
Status check_policy(const PolicySpec& spec, Paradigm paradigm);

// True when a source word ends a sentence (continuous streams): its last character, after closing quotes
// and brackets, is . ! or ?.
bool ends_sentence(std::string_view word);
// True when a source word ends a clause: its last character, after closing quotes and brackets, is , ; or :.
bool ends_clause(std::string_view word);
// Whether `word`, the n-th word of its segment (from 1), ends the segment of a continuous text stream whose
// segments hold at most max_words words (0: no limit): a sentence end; the max_words-th word; or a clause
// end once the segment has at least 3/4 of max_words words.
bool segment_ends_at(std::string_view word, int n, int max_words);

}  // namespace gpstream::stream
