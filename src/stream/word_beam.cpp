// Word beam search (word_beam.h).
#include "stream/word_beam.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stream/log_probs.h"

namespace gpstream::stream {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

struct Hypothesis {
  std::vector<int32_t> ids;
  double score = 0;
};

// max lp[id] over the tokens whose kind passes `take`; kNone when there is none.
template <typename Take>
double log_max(const std::vector<double>& lp, std::span<const TokenKind> kinds, Take take) {
  double mx = kNone;
  for (size_t i = 0; i < lp.size(); ++i)
    if (take(kinds[i])) mx = std::max(mx, lp[i]);
  return mx;
}

bool is_boundary(TokenKind k) {
  return k != TokenKind::Inner;
}
bool is_end(TokenKind k) {
  return k == TokenKind::End;
}

Status check_row(std::span<const float> row, std::span<const TokenKind> kinds) {
  if (row.size() == kinds.size()) return {};
  return invalid_argument("word beam search: a logits row of " + std::to_string(row.size()) +
                          " values for a vocabulary of " + std::to_string(kinds.size()));
}

}  // namespace

Result<WordChoice> search_word(std::span<const float> first, const LogitsAfter& logits_after,
                               const HasText& has_text, std::span<const TokenKind> kinds,
                               const WordBeamOptions& o) {
  if (o.beam < 1) return invalid_argument("word beam search: the beam must be at least 1");
  GPS_TRY(check_row(first, kinds));
  std::vector<double> lp;
  log_softmax(first, lp);
  // The end, token by token: it wins when an end marker is the most likely token allowed here.
  WordChoice best;
  best.end = true;
  best.score = log_max(lp, kinds, is_end);
  best.log_prob = best.score;
  auto may_start_word = [&](TokenKind k) {
    return k != TokenKind::End && (!o.first_must_start_word || k == TokenKind::WordStart);
  };
  const double first_word_token = log_max(lp, kinds, may_start_word);
  if (best.score >= first_word_token || o.max_tokens < 1) return best;
  best.score = kNone;  // a word will be written: the best of them

  // Candidates for the open beam: (score, parent, token); parent -1 is the empty word.
  struct Candidate {
    double score;
    int parent;
    int32_t token;
  };
  std::vector<Candidate> candidates;
  std::vector<Hypothesis> open;
  auto keep_best = [&](const std::vector<Hypothesis>& parents) {
    const size_t n = std::min(candidates.size(), static_cast<size_t>(o.beam));
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n),
                      candidates.end(), [](const Candidate& a, const Candidate& b) {
                        return a.score != b.score ? a.score > b.score : a.token < b.token;
                      });
    std::vector<Hypothesis> next(n);
    for (size_t i = 0; i < n; ++i) {
      if (candidates[i].parent >= 0) next[i].ids = parents[static_cast<size_t>(candidates[i].parent)].ids;
      next[i].ids.push_back(candidates[i].token);
      next[i].score = candidates[i].score;
    }
    candidates.clear();
    open = std::move(next);
  };

  for (size_t t = 0; t < lp.size(); ++t)
    if (may_start_word(kinds[t])) candidates.push_back({lp[t], -1, static_cast<int32_t>(t)});
  keep_best({});

  while (!open.empty()) {
    double best_open = kNone;
    for (const Hypothesis& h : open) best_open = std::max(best_open, h.score);
    if (best.score >= best_open) break;  // no open hypothesis can still win
    for (size_t hi = 0; hi < open.size(); ++hi) {
      const Hypothesis& h = open[hi];
      if (h.score <= best.score) continue;
      GPS_ASSIGN(std::span<const float> row, logits_after(h.ids));
      ++best.expansions;
      GPS_TRY(check_row(row, kinds));
      log_softmax(row, lp);
      const bool text = has_text(h.ids);
      const bool full = static_cast<int>(h.ids.size()) >= o.max_tokens;
      if (text) {
        // Complete here: the word and the most likely token that can follow it (a word start or the end
        // marker); at the length limit a boundary must follow.
        const double complete = full ? h.score : h.score + log_max(lp, kinds, is_boundary);
        if (complete > best.score) {
          best.end = false;
          best.ids = h.ids;
          best.score = complete;
          best.log_prob = h.score;
        }
      }
      if (full) continue;
      for (size_t t = 0; t < lp.size(); ++t) {
        const TokenKind k = kinds[t];
        if (k == TokenKind::End || (text && k == TokenKind::WordStart)) continue;
        candidates.push_back({h.score + lp[t], static_cast<int>(hi), static_cast<int32_t>(t)});
      }
    }
    keep_best(open);
  }
  return best;
}

}  // namespace gpstream::stream
