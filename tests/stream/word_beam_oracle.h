// The best next word by brute force, for testing stream::search_word (word_beam.h) and the Session's word
// beam search, by the definition in word_beam.h: the end if an end marker is the most likely allowed token
// before the word; else every word up to max_tokens tokens is enumerated and scored log P(t1..tn) + the
// largest log P(b | t1..tn) over word starts and end markers b (at the length limit, log P(t1..tn)).
// Written apart from the search (no pruning, no shared code) so that the two can check each other.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "stream/word_beam.h"
#include "util/splitmix64.h"

namespace gpstream::testing {

// A logits row uniform in [-3, 3), a pseudo-random function of (state, prefix): the "model" of the search
// tests.
inline std::vector<float> pseudo_random_logits(uint64_t state, std::span<const int32_t> prefix,
                                               size_t n_vocab) {
  for (int32_t id : prefix) state = splitmix64_mix(state ^ static_cast<uint64_t>(id + 1));
  std::vector<float> row(n_vocab);
  for (float& v : row) {
    state = splitmix64_mix(state);
    v = static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-53 * 6.0 - 3.0);
  }
  return row;
}

struct OracleWord {
  bool end = true;
  std::vector<int32_t> ids;
  double score = -std::numeric_limits<double>::infinity();
};

class WordOracle {
 public:
  // logits(ids): the row after the word's tokens `ids` (empty: the row before the word).
  using Logits = std::function<std::vector<float>(const std::vector<int32_t>& ids)>;
  using Text = std::function<bool(const std::vector<int32_t>& ids)>;

  WordOracle(Logits logits, Text has_text, std::vector<stream::TokenKind> kinds)
      : logits_(std::move(logits)), has_text_(std::move(has_text)), kinds_(std::move(kinds)) {}

  OracleWord best(int max_tokens, bool first_must_start_word) const {
    const std::vector<double> p = probs(logits_({}));
    double first_token = 0;  // the most likely token a word may start with
    for (size_t t = 0; t < p.size(); ++t) {
      const stream::TokenKind k = kinds_[t];
      if (k != stream::TokenKind::End && (!first_must_start_word || k == stream::TokenKind::WordStart))
        first_token = std::max(first_token, p[t]);
    }
    OracleWord best;
    best.score = std::log(largest(p, true));
    if (largest(p, true) >= first_token || max_tokens < 1) return best;
    best.score = -std::numeric_limits<double>::infinity();
    std::vector<int32_t> ids;
    walk(ids, 0.0, max_tokens, first_must_start_word, best);
    return best;
  }

  // The score of one given word (not the end), by the same definition.
  double score(const std::vector<int32_t>& ids, int max_tokens) const {
    std::vector<int32_t> prefix;
    double s = 0;
    for (int32_t id : ids) {
      s += std::log(probs(logits_(prefix))[id]);
      prefix.push_back(id);
    }
    return static_cast<int>(ids.size()) >= max_tokens ? s
                                                      : s + std::log(largest(probs(logits_(prefix)), false));
  }

 private:
  static std::vector<double> probs(const std::vector<float>& row) {
    double mx = row[0];
    for (float v : row) mx = std::max(mx, static_cast<double>(v));
    std::vector<double> p(row.size());
    double z = 0;
    for (size_t i = 0; i < row.size(); ++i) z += p[i] = std::exp(row[i] - mx);
    for (double& v : p) v /= z;
    return p;
  }
  // The largest probability of an end marker (ends_only) or of any boundary (word start or end marker).
  double largest(const std::vector<double>& p, bool ends_only) const {
    double m = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      const bool end = kinds_[i] == stream::TokenKind::End;
      if (end || (!ends_only && kinds_[i] == stream::TokenKind::WordStart)) m = std::max(m, p[i]);
    }
    return m;
  }
  void walk(std::vector<int32_t>& ids, double s, int max_tokens, bool first_start, OracleWord& best) const {
    const std::vector<double> p = probs(logits_(ids));
    const bool text = !ids.empty() && has_text_(ids);
    const bool full = static_cast<int>(ids.size()) >= max_tokens;
    if (text) {
      const double complete = full ? s : s + std::log(largest(p, false));
      if (complete > best.score) best = {false, ids, complete};
    }
    if (full) return;
    for (size_t t = 0; t < p.size(); ++t) {
      const stream::TokenKind k = kinds_[t];
      if (k == stream::TokenKind::End) continue;
      if (ids.empty() && first_start && k != stream::TokenKind::WordStart) continue;
      if (text && k == stream::TokenKind::WordStart) continue;
      ids.push_back(static_cast<int32_t>(t));
      walk(ids, s + std::log(p[t]), max_tokens, first_start, best);
      ids.pop_back();
    }
  }

  Logits logits_;
  Text has_text_;
  std::vector<stream::TokenKind> kinds_;
};

}  // namespace gpstream::testing
