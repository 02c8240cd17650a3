// Sentence ends decided by the model, for continuous source text that has no punctuation (ASR output, live
// captions, text with its punctuation removed). A hidden-event language model (Stolcke and Shriberg, 1996)
// read off the streaming model's own source side: a segment's source rows are a causal language model over
// the prompt and the segment's words, so between words t and t+1 two explanations of word t+1 compete:
//   a sentence ends after word t:  P(an end mark . ! ? | prompt, words 1..t) · P(word t+1 | prompt)
//   the sentence goes on:          P(word t+1 | prompt, words 1..t)
// each word by its first token (as the session encodes it: without a leading space first in a segment,
// with one after a word). The sentence ends where the first is the more probable by the factor e^bias.
// A new segment starts from the prompt alone, so "P(word | prompt)" is the row a fresh segment reads.
//
// SentenceEndModel holds what every stream shares (built once per model and prompt): the prompt's rows, the
// next-token log-probabilities after it and the vocabulary's end marks. SentenceEndDetector is one stream's
// state: a source-only cache of its current segment (prompt rows, then its words), fed lazily.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "model/forward_model.h"
#include "model/kv_cache.h"
#include "stream/codec.h"
#include "stream/prompt_cache.h"

namespace gpstream::stream {

// The default of SessionOptions::model_sentence_ends_after: a stream whose last 24 words held no sentence
// end is treated as unpunctuated and the model decides its sentence ends (90 % of the training corpora's
// source sentences have at most 23 words), so punctuated text keeps its own boundaries.
constexpr int kDefaultModelSentenceEndsAfter = 24;
// The default bias (the log-odds by which a sentence end must win; SentenceEndDetector): chosen on
// training pairs for the best F1 of the ends found with one word of lookahead (docs/streaming.md, "Sentence
// ends without punctuation").
constexpr double kDefaultSentenceEndBias = -2.0;

class SentenceEndModel {
 public:
  // The vocabulary's end marks: the tokens below n_vocab, not special, whose text (spaces trimmed) is a run
  // of . ! ? and … only. They depend on the tokenizer alone, not on the language pair or the prompt.
  static std::vector<int32_t> scan_end_marks(const SegmentCodec& codec, int32_t n_vocab);
  // prompt: codec's prompt rows for model (built here when null); end_marks: scan_end_marks's result for
  // this model's tokenizer (scanned here when null).
  static Result<std::shared_ptr<const SentenceEndModel>> build(
      model::ForwardModel& model, const SegmentCodec& codec,
      std::shared_ptr<const PromptCache> prompt = nullptr, const std::vector<int32_t>* end_marks = nullptr);

  const model::ForwardModel* model() const { return model_; }
  const PromptCache& prompt() const { return *prompt_; }
  const std::shared_ptr<const PromptCache>& shared_prompt() const { return prompt_; }
  // log P(token | prompt) for every vocabulary id.
  const std::vector<double>& start_log_probs() const { return start_log_probs_; }
  const std::vector<int32_t>& end_mark_ids() const { return end_mark_ids_; }

 private:
  SentenceEndModel() = default;
  const model::ForwardModel* model_ = nullptr;
  std::shared_ptr<const PromptCache> prompt_;
  std::vector<double> start_log_probs_;
  std::vector<int32_t> end_mark_ids_;
};

class SentenceEndDetector {
 public:
  // max_rows: the most rows the segment's context may hold (prompt included); past it the detector stops
  // deciding until the next reset (a segment of very long words: the word limit cuts it anyway). bias: the
  // log-odds by which a sentence end must win (0: the more probable explanation wins; negative: ends are
  // favoured), a finite number.
  SentenceEndDetector(model::ForwardModel& model, const SegmentCodec& codec,
                      std::shared_ptr<const SentenceEndModel> ends, int max_rows,
                      double bias = kDefaultSentenceEndBias);

  // A new segment: the context is the prompt alone.
  void reset();
  // Words of the current segment in the context so far (fed or waiting to be).
  int words() const { return words_; }
  // Appends the segment's next word to the context without a decision (forwarded at the next decision).
  Status feed(std::string_view word);
  // Whether a sentence ends between the context (at least one word) and `next`; with `after`, the word
  // after `next`, both explanations also account for `next` as a whole word and for `after`'s first token,
  // which tells a sentence start ("we | The") from its continuation far better than `next` alone. Then
  // `next` is part of the context: after an end, the context is the prompt and `next`, the new segment's
  // start.
  Result<bool> ends_before(std::string_view next, std::optional<std::string_view> after = std::nullopt);
  // Rows forwarded and forwards run (cost accounting).
  int64_t rows_forwarded() const { return rows_forwarded_; }
  int64_t forwards() const { return forwards_; }

 private:
  Status forward_pending();
  // log Σ_e P(e | context) over the end marks.
  double log_end_mass() const;

  model::ForwardModel& model_;
  const SegmentCodec& codec_;
  std::shared_ptr<const SentenceEndModel> ends_;
  model::KvCache cache_;  // the context's rows: the prompt, then the segment's words
  model::KvCache fresh_;  // scratch: the prompt and `next`, as a new segment would start
  int max_rows_;
  double bias_;
  int words_ = 0;
  bool overflowed_ = false;                // the context outgrew max_rows: no decisions until reset()
  std::vector<int32_t> pending_;           // fed tokens not yet forwarded
  std::vector<double> context_log_probs_;  // log P(token | prompt, words fed), after forward_pending()
  std::vector<float> logits_;
  int64_t rows_forwarded_ = 0, forwards_ = 0;
};

}  // namespace gpstream::stream
