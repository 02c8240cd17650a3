// Sentence ends decided by the model's source side (see sentence_ends.h).
#include "stream/sentence_ends.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "model/batch.h"
#include "stream/log_probs.h"

namespace gpstream::stream {
namespace {

// A token's text (spaces trimmed) is a run of sentence-end marks: . ! ? or the ellipsis U+2026.
bool is_end_mark_text(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (text.empty()) return false;
  constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
  while (!text.empty()) {
    if (text.front() == '.' || text.front() == '!' || text.front() == '?')
      text.remove_prefix(1);
    else if (text.starts_with(kEllipsis))
      text.remove_prefix(kEllipsis.size());
    else
      return false;
  }
  return true;
}

}  // namespace

std::vector<int32_t> SentenceEndModel::scan_end_marks(const SegmentCodec& codec, int32_t n_vocab) {
  std::vector<int32_t> ids;
  const int32_t n = std::min(codec.vocab_size(), n_vocab);
  for (int32_t id = 0; id < n; ++id) {
    if (codec.is_special(id)) continue;
    const int32_t one[] = {id};
    if (is_end_mark_text(codec.decode(one))) ids.push_back(id);
  }
  return ids;
}

Result<std::shared_ptr<const SentenceEndModel>> SentenceEndModel::build(
    model::ForwardModel& model, const SegmentCodec& codec, std::shared_ptr<const PromptCache> prompt,
    const std::vector<int32_t>* end_marks) {
  auto m = std::shared_ptr<SentenceEndModel>(new SentenceEndModel());
  m->model_ = &model;
  if (prompt && prompt->model() != &model)
    return invalid_argument("sentence ends: the prompt cache was built for another model");
  if (!prompt) {
    GPS_ASSIGN(prompt, PromptCache::build(model, codec));
  }
  m->prompt_ = std::move(prompt);
  if (m->prompt_->ids().empty())
    return invalid_argument(
        "sentence ends: the template has no prompt, so no row predicts a segment's first word");
  const std::vector<float>& start = m->prompt_->next_log_probs();
  m->start_log_probs_.assign(start.begin(), start.end());
  m->end_mark_ids_ = end_marks ? *end_marks : scan_end_marks(codec, model.config().n_vocab);
  if (m->end_mark_ids_.empty())
    return invalid_argument("sentence ends: the vocabulary has no token that is a sentence-end mark (. ! ?)");
  return std::shared_ptr<const SentenceEndModel>(std::move(m));
}

SentenceEndDetector::SentenceEndDetector(model::ForwardModel& model, const SegmentCodec& codec,
                                         std::shared_ptr<const SentenceEndModel> ends, int max_rows,
                                         double bias)
    : model_(model),
      codec_(codec),
      ends_(std::move(ends)),
      cache_(model.config(), max_rows),
      fresh_(model.config(), max_rows),
      max_rows_(max_rows),
      bias_(bias) {
  GPS_ASSERT(std::isfinite(bias), "sentence ends: the bias must be a finite number");
}

void SentenceEndDetector::reset() {
  cache_.clear();
  words_ = 0;
  overflowed_ = false;
  pending_.clear();
  context_log_probs_.clear();
}

namespace {

// Source rows of a group-paradigm segment appended after cache's rows: ids as batch sequence seq, logits
// for every row (all_logits) or only the last.
void add_source_rows(model::Batch& batch, const model::KvCache& cache, int seq, std::span<const int32_t> ids,
                     bool all_logits) {
  const int base = cache.rows(model::Group::Source);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int row = base + static_cast<int>(i);
    batch.add({.id = ids[i],
               .pos = static_cast<float>(row),
               .seq = seq,
               .group = model::Group::Source,
               .n_src = row + 1,
               .logits = all_logits || i + 1 == ids.size()});
  }
}

// log P(ids[0] | before) + Σ log P(ids[i] | the row of ids[i − 1]) over rows[0 .. ids.size() − 2], each
// row n_vocab logits.
double word_log_prob(std::span<const int32_t> ids, std::span<const double> before,
                     std::span<const float> rows, size_t n_vocab) {
  double lp = before[static_cast<size_t>(ids[0])];
  for (size_t i = 1; i < ids.size(); ++i) {
    lp += log_prob(rows.subspan((i - 1) * n_vocab, n_vocab), ids[i]);
  }
  return lp;
}

bool in_vocab(std::span<const int32_t> ids, size_t n) {
  return std::all_of(ids.begin(), ids.end(),
                     [n](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n; });
}

}  // namespace

Status SentenceEndDetector::feed(std::string_view word) {
  const bool first = words_ == 0;
  ++words_;
  if (overflowed_) return {};
  GPS_ASSIGN(std::vector<int32_t> ids, codec_.encode(SegmentKind::SourceWord, word, first));
  const size_t rows = ends_->prompt().ids().size() + static_cast<size_t>(cache_.rows(model::Group::Source)) +
                      pending_.size() + ids.size();
  if (rows > static_cast<size_t>(max_rows_)) {
    overflowed_ = true;
    pending_.clear();
    return {};
  }
  if (!in_vocab(ids, static_cast<size_t>(model_.config().n_vocab)))
    return out_of_range("sentence ends: a source word encodes to a token outside the model's vocabulary");
  pending_.insert(pending_.end(), ids.begin(), ids.end());
  return {};
}

Status SentenceEndDetector::forward_pending() {
  if (cache_.rows(model::Group::Source) == 0) GPS_TRY(ends_->prompt().copy_into(cache_));
  model::Batch batch;
  add_source_rows(batch, cache_, 0, pending_, false);
  model::KvCache* caches[] = {&cache_};
  GPS_TRY(model_.forward(batch, caches, logits_));
  rows_forwarded_ += batch.size();
  ++forwards_;
  pending_.clear();
  log_softmax(std::span<const float>(logits_).first(static_cast<size_t>(model_.config().n_vocab)),
              context_log_probs_);
  return {};
}

double SentenceEndDetector::log_end_mass() const {
  std::vector<double> marks;
  marks.reserve(ends_->end_mark_ids().size());
  for (int32_t e : ends_->end_mark_ids()) marks.push_back(context_log_probs_[static_cast<size_t>(e)]);
  return log_sum_exp(std::span<const double>(marks));
}

Result<bool> SentenceEndDetector::ends_before(std::string_view next, std::optional<std::string_view> after) {
  if (overflowed_ || words_ == 0) {
    GPS_TRY(feed(next));
    return false;
  }
  if (!pending_.empty()) GPS_TRY(forward_pending());
  const size_t n_vocab = static_cast<size_t>(model_.config().n_vocab);
  GPS_ASSIGN(std::vector<int32_t> going_on, codec_.encode(SegmentKind::SourceWord, next, false));
  GPS_ASSIGN(std::vector<int32_t> starting, codec_.encode(SegmentKind::SourceWord, next, true));
  std::vector<int32_t> then;  // after's tokens, after a word
  if (after) {
    GPS_ASSIGN(then, codec_.encode(SegmentKind::SourceWord, *after, false));
  }
  if (context_log_probs_.empty() || going_on.empty() || starting.empty() || !in_vocab(going_on, n_vocab) ||
      !in_vocab(starting, n_vocab) || !in_vocab(then, n_vocab)) {
    GPS_TRY(feed(next));
    return false;
  }
  const size_t prompt_rows = ends_->prompt().ids().size();
  if (then.empty() ||
      static_cast<size_t>(cache_.rows(model::Group::Source)) + going_on.size() >
          static_cast<size_t>(max_rows_) ||
      prompt_rows + starting.size() > static_cast<size_t>(max_rows_)) {
    // One word: each explanation by `next`'s first token.
    const bool end = log_end_mass() + ends_->start_log_probs()[static_cast<size_t>(starting[0])] -
                         context_log_probs_[static_cast<size_t>(going_on[0])] >
                     bias_;
    if (end) reset();
    GPS_TRY(feed(next));
    return end;
  }
  // Both explanations in one forward: the context going on with `next`, and a new segment starting with it.
  fresh_.clear();
  GPS_TRY(ends_->prompt().copy_into(fresh_));
  model::Batch batch;
  add_source_rows(batch, cache_, 0, going_on, true);
  add_source_rows(batch, fresh_, 1, starting, true);
  model::KvCache* caches[] = {&cache_, &fresh_};
  GPS_TRY(model_.forward(batch, caches, logits_));
  rows_forwarded_ += batch.size();
  ++forwards_;
  const std::span<const float> all(logits_);
  const std::span<const float> on_rows = all.first(going_on.size() * n_vocab);
  const std::span<const float> start_rows = all.subspan(going_on.size() * n_vocab, starting.size() * n_vocab);
  const auto last_row = [&](std::span<const float> rows) { return rows.subspan(rows.size() - n_vocab); };
  const double ends = log_end_mass() +
                      word_log_prob(starting, ends_->start_log_probs(), start_rows, n_vocab) +
                      log_prob(last_row(start_rows), then[0]);
  const double goes_on =
      word_log_prob(going_on, context_log_probs_, on_rows, n_vocab) + log_prob(last_row(on_rows), then[0]);
  const bool end = ends - goes_on > bias_;
  if (end) {
    std::swap(cache_, fresh_);
    words_ = 1;
  } else {
    ++words_;
  }
  log_softmax(last_row(end ? start_rows : on_rows), context_log_probs_);
  return end;
}

}  // namespace gpstream::stream
