// Word beam search: the next target word chosen as the most probable whole word, not token by token.
// A streaming decoder commits one word at a time (the policy may read between words), so the search runs
// over one word. First, as in greedy decoding, the sentence ends if an end marker is the most likely token
// allowed in the row before the word. Otherwise hypotheses grow token by token, `beam` at a time; one that
// holds text is complete where a word boundary may follow it, and scores (log-probabilities)
//   word w = t1..tn:  log P(t1..tn) + max over boundary tokens b of log P(b | w)
// — the word together with the most likely token after it (a word start or the end marker); at the length
// limit, log P(t1..tn). The search stops once the best complete score is at least every open hypothesis's
// (extending a hypothesis only lowers its score), so a beam wider than the number of hypotheses returns the
// exact best. Greedy decoding ends a word where the single most likely next token is a word start; the
// search compares whole words ("indices" against "indexes" once both are spelled out).
// Why max and not the sum over boundary tokens (the exact probability that the word ends there): a trained
// model leaves a thin tail of probability on thousands of word-start tokens, and summed it made short
// prefixes look like whole words ("Re enter", "un group"): on 300 training utterances of the speech model at
// k = 7, 18.7 % WER summed against 13.1 % with max (14.8 % greedy)
// (docs/streaming.md, "Word beam search").
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "util/error.h"

namespace gpstream::stream {

// What a token does to the word being written.
enum class TokenKind : uint8_t { Inner, WordStart, End };

struct WordBeamOptions {
  int beam = 4;         // hypotheses kept per token step (≥ 1)
  int max_tokens = 32;  // tokens per word at most; a hypothesis this long is complete
  bool first_must_start_word =
      false;  // the word's first token must be a word start (after a word, or a re-feed)
};

struct WordChoice {
  bool end = false;          // the end marker wins: no further word
  std::vector<int32_t> ids;  // the word's tokens (empty when end)
  double score = 0;          // its log-probability as defined above
  double log_prob = 0;       // log P(t1..tn) of the word's tokens alone (end: the end marker's log P)
  int expansions = 0;        // logits rows requested from `logits_after`
};

// logits_after(ids): the logits row after the word's tokens `ids` have been fed (ids is never empty; the
// row before the word is `first`). has_text(ids): the tokens decode to visible text (a lone word-start
// marker does not, so it cannot end a word). kinds[id] classifies the vocabulary (same size as the rows).
using LogitsAfter = std::function<Result<std::span<const float>>(std::span<const int32_t> ids)>;
using HasText = std::function<bool(std::span<const int32_t> ids)>;

Result<WordChoice> search_word(std::span<const float> first, const LogitsAfter& logits_after,
                               const HasText& has_text, std::span<const TokenKind> kinds,
                               const WordBeamOptions& options);

}  // namespace gpstream::stream
