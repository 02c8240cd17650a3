// stream::search_word against a brute-force oracle (word_beam_oracle.h) on pseudo-random "models", and a
// hand-derived case where the most probable first token does not start the most probable word.
#include "stream/word_beam.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../testing/fp_bounds.h"
#include "word_beam_oracle.h"

namespace gpstream {
namespace {

using stream::TokenKind;
using testing::WordOracle;

// Vocabulary: 0 end marker, 1 a word start with text, 2 a lone word-start marker (no text, like "▁"),
// 3..6 inner tokens.
const std::vector<TokenKind> kKinds = {TokenKind::End,   TokenKind::WordStart, TokenKind::WordStart,
                                       TokenKind::Inner, TokenKind::Inner,     TokenKind::Inner,
                                       TokenKind::Inner};

bool has_text(std::span<const int32_t> ids) {
  for (int32_t id : ids)
    if (id != 2) return true;
  return false;
}

// Logits as a pseudo-random function of (seed, prefix).
std::vector<float> random_row(uint64_t seed, std::span<const int32_t> ids) {
  return testing::pseudo_random_logits(seed * 0x9E3779B97F4A7C15ull, ids, kKinds.size());
}

struct Searched {
  stream::WordChoice choice;
  int calls = 0;
};

Searched search(uint64_t seed, int beam, int max_tokens, bool first_start) {
  std::vector<float> first = random_row(seed, {}), row;
  Searched out;
  auto after = [&](std::span<const int32_t> ids) -> Result<std::span<const float>> {
    ++out.calls;
    row = random_row(seed, ids);
    return std::span<const float>(row);
  };
  stream::WordBeamOptions o{beam, max_tokens, first_start};
  auto r = stream::search_word(first, after, has_text, kKinds, o);
  EXPECT_TRUE(r.ok());
  out.choice = *r;
  return out;
}

// The search (a double log-softmax: ℓ − (mx + log Σ exp(ℓ − mx))) and the oracle (log of exp(ℓ − mx) / z)
// score a word from the same fp32 rows of V = 7 logits in [-3, 3), in double (u = 2^-53). Per term each
// side is within 12·γ_{V+3} of exact: the V-term sum, exp, log and the division round (γ_{V+3} relative) on
// quantities of magnitude ≤ |ℓ − mx| + log V + |mx| + 1 ≤ 6 + 2 + 3 + 1 = 12. A word sums ≤ max_tokens + 1
// = 5 terms of magnitude ≤ 8 (4 additions: γ_4 · 40). The two sides differ by at most twice that: ≈ 2e-13.
const double kScoreTol =
    2.0 * (5.0 * 12.0 * testing::gamma_n(static_cast<int64_t>(kKinds.size()) + 3, testing::kUnitF64) +
           40.0 * testing::gamma_n(4, testing::kUnitF64));

WordOracle oracle(uint64_t seed) {
  return WordOracle([seed](const std::vector<int32_t>& ids) { return random_row(seed, ids); },
                    [](const std::vector<int32_t>& ids) { return has_text(ids); }, kKinds);
}

TEST(WordBeam, AnUnboundedBeamFindsTheExactBestWord) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    for (bool first_start : {false, true}) {
      const int max_tokens = 1 + static_cast<int>(seed % 4);
      const testing::OracleWord want = oracle(seed).best(max_tokens, first_start);
      const Searched got = search(seed, 100000, max_tokens, first_start);
      ASSERT_EQ(got.choice.end, want.end) << seed;
      ASSERT_EQ(got.choice.ids, want.ids) << seed;
      EXPECT_NEAR(got.choice.score, want.score, kScoreTol) << seed;
      EXPECT_EQ(got.choice.expansions, got.calls);
    }
  }
}

TEST(WordBeam, ANarrowBeamReportsItsWordsTrueScore) {
  int worse = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    for (int beam : {1, 2, 3}) {
      const int max_tokens = 4;
      const WordOracle o = oracle(seed);
      const Searched got = search(seed, beam, max_tokens, false);
      const testing::OracleWord best = o.best(max_tokens, false);
      // The end is decided token by token, whatever the beam.
      ASSERT_EQ(got.choice.end, best.end) << seed << " beam " << beam;
      if (got.choice.end) continue;
      EXPECT_NEAR(got.choice.score, o.score(got.choice.ids, max_tokens), kScoreTol)
          << seed << " beam " << beam;
      EXPECT_LE(got.choice.score, best.score + kScoreTol);
      worse += got.choice.score < best.score - kScoreTol;
      EXPECT_TRUE(has_text(got.choice.ids));
    }
  }
  EXPECT_GT(worse, 0);  // the pruning is real: a narrow beam misses the best word sometimes
}

// By hand: the first token "a" (id 1, p = 0.40) beats "b" (3, p = 0.35 — an inner token: allowed first
// at a sentence start), but after "a" the mass spreads over three continuations, while "b" is a whole word
// on its own. Scores (the word and its most likely boundary token): "b" 0.35 · 0.60 = 0.21; "a" alone
// 0.40 · 0.02; "a" + one of x, y, z at most 0.40 · 0.32 · 0.60 = 0.077. The end marker (0.05) is not the
// most likely token. Token by token one would write "a…" (a beam of 1 too); a beam of 2 writes "b".
TEST(WordBeam, AWiderBeamFindsTheWordTheFirstTokenMisses) {
  auto probs_to_logits = [](std::vector<double> p) {
    std::vector<float> row;
    for (double v : p) row.push_back(static_cast<float>(std::log(v)));
    return row;
  };
  const std::vector<float> first = probs_to_logits({0.05, 0.40, 0.05, 0.35, 0.05, 0.05, 0.05});
  const std::vector<float> after_a = probs_to_logits({0.01, 0.02, 0.01, 0.02, 0.30, 0.32, 0.32});
  const std::vector<float> after_b = probs_to_logits({0.30, 0.60, 0.01, 0.03, 0.02, 0.02, 0.02});
  const std::vector<float> after_ax = probs_to_logits({0.30, 0.60, 0.01, 0.03, 0.02, 0.02, 0.02});
  auto after = [&](std::span<const int32_t> ids) -> Result<std::span<const float>> {
    if (ids[0] == 3 && ids.size() == 1) return std::span<const float>(after_b);
    if (ids.size() == 1) return std::span<const float>(after_a);
    return std::span<const float>(after_ax);
  };
  auto one = stream::search_word(first, after, has_text, kKinds, {1, 8, false});
  auto two = stream::search_word(first, after, has_text, kKinds, {2, 8, false});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(two->ids, (std::vector<int32_t>{3}));
  EXPECT_EQ(one->ids, (std::vector<int32_t>{1, 5}));  // "a" then the first of the two 0.32 continuations
  // The rows hold fp32 log p (|Δℓ| ≤ u·|log p|, u = 2^-24) of distributions that sum to 1, so the
  // log-softmax of a row moves by ≤ u·H(p) (H = Σ p |log p|) and a term by ≤ u·(|log p_t| + H(p)).
  auto term_tol = [](const std::vector<double>& p, double pt) {
    double h = 0;
    for (double v : p) h += v * std::fabs(std::log(v));
    return testing::kUnitF32 * (std::fabs(std::log(pt)) + h) + 12.0 * testing::gamma_n(10, testing::kUnitF64);
  };
  const std::vector<double> p_first = {0.05, 0.40, 0.05, 0.35, 0.05, 0.05, 0.05},
                            p_a = {0.01, 0.02, 0.01, 0.02, 0.30, 0.32, 0.32},
                            p_b = {0.30, 0.60, 0.01, 0.03, 0.02, 0.02, 0.02};
  EXPECT_NEAR(one->score, std::log(0.40) + std::log(0.32) + std::log(0.60),
              term_tol(p_first, 0.40) + term_tol(p_a, 0.32) + term_tol(p_b, 0.60));
  EXPECT_NEAR(two->score, std::log(0.35) + std::log(0.60), term_tol(p_first, 0.35) + term_tol(p_b, 0.60));
  // log_prob (the confidence policy's word probability) is the word's tokens alone, without the boundary
  // term, to the same per-term tolerances.
  EXPECT_NEAR(one->log_prob, std::log(0.40) + std::log(0.32), term_tol(p_first, 0.40) + term_tol(p_a, 0.32));
  EXPECT_NEAR(two->log_prob, std::log(0.35), term_tol(p_first, 0.35));
  // The end marker as the most likely token: the end, with its own log-probability.
  const std::vector<double> p_end = {0.55, 0.20, 0.05, 0.05, 0.05, 0.05, 0.05};
  auto end = stream::search_word(probs_to_logits(p_end), after, has_text, kKinds, {2, 8, false});
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->end);
  EXPECT_NEAR(end->log_prob, std::log(0.55), term_tol(p_end, 0.55));
}

TEST(WordBeam, BadArgumentsAreRefused) {
  std::vector<float> first(kKinds.size(), 0.0f);
  const std::vector<float> short_row(3, 0.0f);
  first[1] = 1.0f;  // a word start is the most likely token: the search expands (and meets the short row)
  auto after = [&](std::span<const int32_t>) -> Result<std::span<const float>> {
    return std::span<const float>(short_row);
  };
  EXPECT_FALSE(stream::search_word(first, after, has_text, kKinds, {0, 4, false}).ok());
  EXPECT_FALSE(stream::search_word(short_row, after, has_text, kKinds, {2, 4, false}).ok());
  auto r = stream::search_word(first, after, has_text, kKinds, {2, 4, false});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace gpstream
