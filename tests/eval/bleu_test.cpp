// BLEU tests: the vectors of metrics.md B.5 (copied from sacrebleu/test/test_bleu.py) as TEST_P
// tables at their tolerance, plus hand-derived cases (derivations in comments).
#include "eval/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace gpstream::eval {
namespace {

const std::vector<std::string> kHyps = {"The dog bit the man.", "It wasn't surprising.",
                                        "The man had just bitten him."};
const std::vector<std::vector<std::string>> kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};

std::string fmt2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// sacrebleu.compat.raw_corpus_bleu: floor smoothing, tokenize none, effective order, force.
BleuOptions raw_options(std::optional<double> smooth_value) {
  BleuOptions o;
  o.smooth_method = SmoothMethod::Floor;
  o.smooth_value = smooth_value;
  o.tokenize = BleuTokenizer::None;
  o.effective_order = true;
  return o;
}

struct CorpusCase {
  const char* name;
  BleuOptions options;
  bool empty_hyps;
  double expected;
  double tol;
};

class BleuCorpusTest : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(BleuCorpusTest, MatchesSacrebleu) {
  const auto& c = GetParam();
  std::vector<std::string> hyps = c.empty_hyps ? std::vector<std::string>{"", "", ""} : kHyps;
  auto r = corpus_bleu(hyps, kRefs, c.options);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->score.score, c.expected, c.tol) << c.name;
  EXPECT_EQ(r->num_refs, 2);
}

BleuOptions with_tok(BleuTokenizer t) {
  BleuOptions o;
  o.tokenize = t;
  return o;
}
BleuOptions with_smooth(SmoothMethod m) {
  BleuOptions o;
  o.smooth_method = m;
  return o;
}

// B.5 #1-#5. The file's expectations carry 6-8 decimals; the tolerance is the last printed digit.
INSTANTIATE_TEST_SUITE_P(
    MetricsMdB5, BleuCorpusTest,
    ::testing::Values(CorpusCase{"corpus_bleu", BleuOptions{}, false, 48.530827, 1e-6},
                      CorpusCase{"empty_hyps", BleuOptions{}, true, 0.0, 0.0},
                      CorpusCase{"tok_none", with_tok(BleuTokenizer::None), false, 49.1919566, 1e-7},
                      CorpusCase{"tok_13a", with_tok(BleuTokenizer::Tok13a), false, 48.530827, 1e-6},
                      CorpusCase{"smooth_none", with_smooth(SmoothMethod::None), false, 48.530827, 1e-6},
                      CorpusCase{"tok_intl", with_tok(BleuTokenizer::Intl), false, 43.91623493, 1e-8}));

class BleuMaxOrderTest : public ::testing::TestWithParam<std::pair<int, const char*>> {};

// B.5 #6: BLEU(max_ngram_order=k).corpus_score(_hyps, _refs), f"{score:.2f}".
TEST_P(BleuMaxOrderTest, MatchesSacrebleu) {
  BleuOptions o;
  o.max_ngram_order = GetParam().first;
  auto r = corpus_bleu(kHyps, kRefs, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(fmt2(r->score.score), GetParam().second);
  EXPECT_EQ(r->score.precisions.size(), static_cast<size_t>(GetParam().first));
}
INSTANTIATE_TEST_SUITE_P(MetricsMdB5, BleuMaxOrderTest,
                         ::testing::Values(std::make_pair(1, "77.65"), std::make_pair(2, "60.50"),
                                           std::make_pair(3, "53.93"), std::make_pair(4, "48.53"),
                                           std::make_pair(5, "46.14"), std::make_pair(6, "43.28")));

struct RawCase {
  std::vector<std::string> hyps;
  std::vector<std::vector<std::string>> refs;
  std::optional<double> smooth_value;
  double expected;  // score / 100
};

class BleuRawTest : public ::testing::TestWithParam<RawCase> {};

TEST_P(BleuRawTest, MatchesSacrebleu) {
  const auto& c = GetParam();
  auto r = corpus_bleu(c.hyps, c.refs, raw_options(c.smooth_value));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->score.score / 100.0, c.expected, 1e-10);
}

// B.5 #7-#10, #12 (raw_corpus_bleu).
INSTANTIATE_TEST_SUITE_P(
    MetricsMdB5, BleuRawTest,
    ::testing::Values(
        RawCase{{"this is a test", "another test"}, {{"ref1", "ref2"}}, 0.01, 0.0},
        RawCase{{"this is a test"}, {{"this is a test"}}, 0.01, 1.0},
        RawCase{{"this is a fest"}, {{"this is a test"}}, 0.01, 0.223606797749979},
        RawCase{{"test"}, {{"a test"}}, 0.01, 0.3678794411714425},
        RawCase{{"a test"}, {{"a test"}}, 0.01, 1.0},
        RawCase{{"a little test"}, {{"a test"}}, 0.01, 0.03218297948685433},
        RawCase{{"am I am a character sequence"}, {{"I am a symbol string sequence a a"}}, 0.0, 0.0},
        RawCase{{"am I am a character sequence"},
                {{"I am a symbol string sequence a a"}},
                std::nullopt,
                0.1555722182},
        RawCase{
            {"am I am a character sequence"}, {{"I am a symbol string sequence a a"}}, 0.1, 0.1555722182}));

// B.5 #11: statistics of the raw pair.
TEST(BleuStatistics, CountsAndTotals) {
  auto r = corpus_bleu({"am I am a character sequence"}, {{"I am a symbol string sequence a a"}},
                       raw_options(0.01));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->score.counts, (std::vector<double>{4, 2, 1, 0}));
  EXPECT_EQ(r->score.totals, (std::vector<double>{6, 5, 4, 3}));
}

// B.5 #13: BLEU.compute_bleu([9,7,5,3],[10,8,6,4],11,11) with smooth 'none'.
TEST(BleuCompute, Scoring) {
  auto s = compute_bleu({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11);
  EXPECT_NEAR(s.score / 100.0, 0.8375922397, 1e-10);
}

struct DegenerateCase {
  std::vector<double> correct, totals;
  int64_t sys, ref;
  double value;
};
class BleuDegenerateTest : public ::testing::TestWithParam<DegenerateCase> {};

// B.5 #14: all exactly 0.0.
TEST_P(BleuDegenerateTest, Zero) {
  const auto& c = GetParam();
  EXPECT_EQ(compute_bleu(c.correct, c.totals, c.sys, c.ref, SmoothMethod::Floor, c.value).score, 0.0);
}
INSTANTIATE_TEST_SUITE_P(MetricsMdB5, BleuDegenerateTest,
                         ::testing::Values(DegenerateCase{{0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1, 0.0},
                                           DegenerateCase{{0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10, 0.0},
                                           DegenerateCase{{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.0},
                                           DegenerateCase{{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.1},
                                           DegenerateCase{{0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5, 0.01},
                                           DegenerateCase{{6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6, 0.0}));

// Hand-derived: exp smoothing. Hyp "a b c d" vs ref "a b x y" (tokenize none):
// 1-grams 2/4, 2-grams 1/3, 3-grams 0/2 → exp: m=2, p3 = 100/(2*2) = 25, 4-grams 0/1 → m=4, p4 = 100/4 = 25.
// BLEU = exp((ln 50 + ln 33.333 + ln 25 + ln 25)/4) = (50 * 100/3 * 25 * 25)^(1/4).
TEST(BleuHand, ExpSmoothing) {
  BleuOptions o;
  o.tokenize = BleuTokenizer::None;
  auto r = corpus_bleu({"a b c d"}, {{"a b x y"}}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->score.score, std::pow(50.0 * 100.0 / 3.0 * 25.0 * 25.0, 0.25), 1e-9);
  EXPECT_NEAR(r->score.precisions[2], 25.0, 1e-12);
  EXPECT_NEAR(r->score.precisions[3], 25.0, 1e-12);
}

// Hand-derived: add-k (k=1) adds 1 to correct and total of orders > 1 (after the all-zero check).
// Same pair: p1 = 2/4, p2 = 2/4, p3 = 1/3, p4 = 1/2 → BLEU = 100 * (0.5*0.5*(1/3)*0.5)^(1/4).
TEST(BleuHand, AddK) {
  BleuOptions o;
  o.tokenize = BleuTokenizer::None;
  o.smooth_method = SmoothMethod::AddK;
  auto r = corpus_bleu({"a b c d"}, {{"a b x y"}}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->score.score, 100.0 * std::pow(0.5 * 0.5 * (1.0 / 3.0) * 0.5, 0.25), 1e-9);
  EXPECT_EQ(r->score.counts, (std::vector<double>{2, 2, 1, 1}));
}

// Hand-derived: several references — clipping uses the max count over references, the length the
// closest reference (ties → shorter). Hyp "the the the" vs refs "the cat" and "the the dog house":
// 1-gram "the": max ref count 2 → 2/3; 2-gram "the the": max(0, 1) = 1 of 2; 3-gram 0/1.
// Lengths 2 and 4 are both at distance 1 from 3 → the shorter (2), so BP = 1.
TEST(BleuHand, MultiReferenceClipAndClosestLength) {
  BleuOptions o;
  o.tokenize = BleuTokenizer::None;
  auto st = bleu_segment_stats("the the the", {"the cat", "the the dog house"}, o);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->hyp_len, 3);
  EXPECT_EQ(st->ref_len, 2);
  EXPECT_EQ(st->correct, (std::vector<int64_t>{2, 1, 0, 0}));
  EXPECT_EQ(st->total, (std::vector<int64_t>{3, 2, 1, 0}));
}

// Hand-derived: variable references (an empty reference line is absent) → signature nrefs:var.
TEST(BleuHand, VariableReferences) {
  auto r = corpus_bleu({"a b", "c d"}, {{"a b", "c d"}, {"", "c e"}}, BleuOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->num_refs, -1);
  EXPECT_EQ(bleu_signature(BleuOptions{}, r->num_refs),
            "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
}

// Hand-derived: lowercase. "The CAT" vs "the cat" (13a): all n-grams match once lowercased → 100... but only
// 2 tokens, so 3- and 4-gram totals are 0 → the loop breaks and those precisions stay 0 → score 0 without
// effective order, 100 with it.
TEST(BleuHand, LowercaseAndEffectiveOrder) {
  BleuOptions o;
  o.lowercase = true;
  auto r = corpus_bleu({"The CAT"}, {{"the cat"}}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->score.counts, (std::vector<double>{2, 1, 0, 0}));
  EXPECT_NEAR(r->score.score, 0.0, 1e-300);
  auto s = sentence_bleu("The CAT", {"the cat"}, sentence_bleu_options(o));
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->score, 100.0, 1e-12);
  o.lowercase = false;
  auto m = corpus_bleu({"The CAT"}, {{"the cat"}}, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->score.counts[0], 0.0);
}

// Hand-derived: char tokenizer on CJK. "日本語" vs "日本人": chars 日 本 語 / 日 本 人:
// 1-grams 2/3, 2-grams 1/2, 3-grams 0/1 (exp: 100/(2*1) = 50), 4-grams total 0 → break, p4 = 0 → 0.
// With effective order: (66.667 * 50 * 50)^(1/3).
TEST(BleuHand, CharTokenizerCjk) {
  BleuOptions o;
  o.tokenize = BleuTokenizer::Char;
  o.effective_order = true;
  auto r = corpus_bleu({"\u65e5\u672c\u8a9e"}, {{"\u65e5\u672c\u4eba"}}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->score.score, std::cbrt(200.0 / 3.0 * 50.0 * 50.0), 1e-9);
}

TEST(BleuErrors, EmptyReferenceAndMismatchedLengths) {
  auto e = corpus_bleu({"a", "b"}, {{"a", ""}}, BleuOptions{});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("segment 2"), std::string::npos);
  auto m = corpus_bleu({"a", "b"}, {{"a"}}, BleuOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("2 lines"), std::string::npos);
}

// Signatures (metrics.md B.2.7) and the score line.
TEST(BleuSignature, LongShortAndSmoothing) {
  BleuOptions o;
  EXPECT_EQ(bleu_signature(o, 1), "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  EXPECT_EQ(bleu_signature(o, 1, true), "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0");
  o.smooth_method = SmoothMethod::Floor;
  EXPECT_EQ(bleu_signature(o, 1), "nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:2.6.0");
  o.smooth_method = SmoothMethod::AddK;
  EXPECT_EQ(bleu_signature(o, 1), "nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:2.6.0");
  o.smooth_value = 0.5;
  o.lowercase = true;
  o.effective_order = true;
  o.tokenize = BleuTokenizer::Intl;
  EXPECT_EQ(bleu_signature(o, 2, true), "#:2|c:lc|e:yes|tok:intl|s:add-k[0.50]|v:2.6.0");
  EXPECT_EQ(bleu_signature(BleuOptions{}, 1, false, {1000, 12345}),
            "nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
}

TEST(BleuSignature, ScoreLine) {
  auto r = corpus_bleu(kHyps, kRefs, BleuOptions{});
  ASSERT_TRUE(r.ok());
  // metrics.md B.2.7's verbose part; the line layout of sacreBLEU's Score.format.
  EXPECT_EQ(format_bleu_line(r->score, bleu_signature(BleuOptions{}, 2), 2),
            "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.53 82.4/50.0/45.5/37.5 "
            "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
}

// Segments whose n-grams do not fit 64-bit packed keys (here 601 distinct tokens = 10 bits, times
// order 8 = 80 bits) use exact keys. Hand derivation: hyp w0..w599; ref holds each odd word twice
// (w(i) for odd i, w(i+1) for even i) → 300 unigram matches; every hyp bigram contains an even word → 0.
TEST(BleuStress, WideNgramsExactPath) {
  std::string hyp, ref;
  for (int i = 0; i < 600; ++i) {
    hyp += 'w';
    hyp += std::to_string(i);
    hyp += ' ';
    ref += 'w';
    ref += std::to_string(i % 2 ? i : i + 1);
    ref += ' ';
  }
  BleuOptions o;
  o.tokenize = BleuTokenizer::None;
  o.max_ngram_order = 8;
  auto st = bleu_segment_stats(hyp, {ref}, o);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->correct, (std::vector<int64_t>{300, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(st->total, (std::vector<int64_t>{600, 599, 598, 597, 596, 595, 594, 593}));
  // The same text with order 4 takes the packed path and must agree on orders 1-4.
  o.max_ngram_order = 4;
  auto p = bleu_segment_stats(hyp, {ref}, o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->correct, (std::vector<int64_t>{300, 0, 0, 0}));
}

}  // namespace
}  // namespace gpstream::eval
