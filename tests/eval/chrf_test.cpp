// chrF tests: metrics.md B.3/B.5 vectors (sacrebleu/test/test_chrf.py, tolerance 1e-4) as TEST_P,
// the [ran] corpus values, and hand derivations.
#include "eval/chrf.h"

#include <gtest/gtest.h>

namespace gpstream::eval {
namespace {

struct ChrfCase {
  std::vector<std::string> hyps;
  std::vector<std::string> refs;
  bool eps;
  double expected;
};

class ChrfTest : public ::testing::TestWithParam<ChrfCase> {};

TEST_P(ChrfTest, MatchesSacrebleu) {
  const auto& c = GetParam();
  ChrfOptions o;
  o.beta = 3;
  o.eps_smoothing = c.eps;
  auto r = corpus_chrf(c.hyps, {c.refs}, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->score, c.expected, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    MetricsMdB5, ChrfTest,
    ::testing::Values(ChrfCase{{"abcdefg"}, {"hijklmnop"}, true, 0.0}, ChrfCase{{"a"}, {"b"}, true, 0.0},
                      ChrfCase{{""}, {"b"}, true, 0.0}, ChrfCase{{""}, {"ref"}, true, 0.0},
                      ChrfCase{{""}, {"reference"}, true, 0.0}, ChrfCase{{""}, {"reference"}, false, 0.0},
                      ChrfCase{{""}, {"c"}, false, 0.0}, ChrfCase{{"aa"}, {"ab"}, true, 8.3333},
                      ChrfCase{{"aa"}, {"ab"}, false, 25.0}, ChrfCase{{"a", "b"}, {"a", "c"}, true, 8.3333},
                      ChrfCase{{"a", "b"}, {"a", "c"}, false, 50.0}, ChrfCase{{"a"}, {"a"}, true, 16.6667},
                      ChrfCase{{"a"}, {"a"}, false, 100.0}, ChrfCase{{"a b c"}, {"a b c"}, true, 50.0},
                      ChrfCase{{"a b c"}, {"a b c"}, false, 100.0}, ChrfCase{{"a b c"}, {"abc"}, true, 50.0},
                      ChrfCase{{"a b c"}, {"abc"}, false, 100.0}));

const std::vector<std::string> kHyps = {"The dog bit the man.", "It wasn't surprising.",
                                        "The man had just bitten him."};
const std::vector<std::vector<std::string>> kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};

// metrics.md B.5 "Extra [ran]": chrF2 59.73, chrF2++ 59.15 on _hyps/_refs with defaults.
TEST(ChrfCorpus, SharedCorpus) {
  auto r = corpus_chrf(kHyps, kRefs, ChrfOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->score, 59.73, 0.005);
  ChrfOptions pp;
  pp.word_order = 2;
  auto r2 = corpus_chrf(kHyps, kRefs, pp);
  ASSERT_TRUE(r2.ok());
  EXPECT_NEAR(r2->score, 59.15, 0.005);
  EXPECT_EQ(chrf_name(pp), "chrF2++");
  EXPECT_EQ(format_chrf_line(r2->score, pp, chrf_signature(pp, r2->num_refs), 2),
            "chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0 = 59.15");
}

TEST(ChrfSignature, LongAndShort) {
  ChrfOptions o;
  EXPECT_EQ(chrf_signature(o, 1), "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
  EXPECT_EQ(chrf_signature(o, 1, true), "#:1|c:mixed|e:yes|nc:6|nw:0|s:no|v:2.6.0");
  o.eps_smoothing = true;
  o.whitespace = true;
  o.lowercase = true;
  EXPECT_EQ(chrf_signature(o, -1), "nrefs:var|case:lc|eff:no|nc:6|nw:0|space:yes|version:2.6.0");
  EXPECT_EQ(chrf_name(o), "chrF2");
}

// Hand-derived (metrics.md B.3): chrF++ word splitting. "(hi)" splits only the last ')' →
// "(hi" and ")" (sacreBLEU's GitHub report no. 124); "x" (length 1) is kept. Hyp "(hi) x" vs ref "(hi) x",
// char_order 1, word_order 1, beta 1: chars (,h,i,),x all match → P=R=1; words "(hi" ")" "x" all
// match → P=R=1 → F = 100. Against ref "hi) x": words "hi" ")" "x": hyp words 3, matches 2 (")", "x") →
// word P = R = 2/3; chars: hyp 5 ref 4 matches 4 → P = 4/5, R = 1. Average P = (0.8 + 2/3)/2,
// R = (1 + 2/3)/2, F1 = 2PR/(P+R).
TEST(ChrfHand, WordNgramsPunctuationSplit) {
  ChrfOptions o;
  o.char_order = 1;
  o.word_order = 1;
  o.beta = 1;
  auto a = sentence_chrf("(hi) x", {"(hi) x"}, o);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(*a, 100.0, 1e-12);
  auto b = sentence_chrf("(hi) x", {"hi) x"}, o);
  ASSERT_TRUE(b.ok());
  const double p = (0.8 + 2.0 / 3.0) / 2, r = (1.0 + 2.0 / 3.0) / 2;
  EXPECT_NEAR(*b, 100.0 * 2 * p * r / (p + r), 1e-12);
}

// Hand-derived: multi-reference picks the reference with the strictly best sentence F (first on
// ties). Hyp "ab": ref1 "xy" (F 0), ref2 "ab" (F 100) → stats of ref2 → 100.
TEST(ChrfHand, MultiReferenceBest) {
  auto r = corpus_chrf({"ab"}, {{"xy"}, {"ab"}}, ChrfOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->score, 100.0, 1e-12);
}

// Hand-derived: non-ASCII characters are single code points. "né" vs "ne" (order 1 only, beta 1):
// chars n,é vs n,e → 1 match of 2 each → F = 50.
TEST(ChrfHand, CodePoints) {
  ChrfOptions o;
  o.char_order = 1;
  o.beta = 1;
  auto r = sentence_chrf("n\u00e9", {"ne"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(*r, 50.0, 1e-12);
  // whitespace=True keeps spaces as characters: "a b" vs "ab" → chars a,' ',b vs a,b: P = 2/3, R = 1.
  o.whitespace = true;
  auto w = sentence_chrf("a b", {"ab"}, o);
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(*w, 100.0 * 2 * (2.0 / 3.0) / (2.0 / 3.0 + 1.0), 1e-12);
}

TEST(ChrfErrors, EmptyReferenceAndMismatch) {
  EXPECT_FALSE(corpus_chrf({"a"}, {{""}}, ChrfOptions{}).ok());
  EXPECT_FALSE(corpus_chrf({"a", "b"}, {{"a"}}, ChrfOptions{}).ok());
  ChrfOptions bad;
  bad.char_order = 0;
  EXPECT_FALSE(corpus_chrf({"a"}, {{"a"}}, bad).ok());
}

}  // namespace
}  // namespace gpstream::eval
