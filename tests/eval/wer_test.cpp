// WER: hand-derived alignments (derivations in the comments), the normalisation rules one by one,
// corpus summing, hostile sizes, and tests/eval/data/wer_golden.jsonl — 313 seeded random pairs
// whose words and S/D/I/H counts were computed by tests/eval/gen_wer_golden.py, a separate Python
// implementation of the definition (full distance matrix + substitution matrix + backtrace, and
// every alignment enumerated for pairs up to 6 × 6 words).
#include "eval/wer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace gpstream::eval {

void PrintTo(const WerCounts& c, std::ostream* os) {
  *os << "{H=" << c.hits << " S=" << c.substitutions << " D=" << c.deletions << " I=" << c.insertions
      << " N=" << c.reference_words << " M=" << c.hypothesis_words << "}";
}

namespace {

WerCounts counts(std::string_view ref, std::string_view hyp, WerNormalization n = WerNormalization::Basic) {
  auto c = wer_counts(ref, hyp, n);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c.ok() ? *c : WerCounts{};
}

// {hits, S, D, I, N, M}
WerCounts make(int64_t h, int64_t s, int64_t d, int64_t i, int64_t n, int64_t m) {
  return WerCounts{h, s, d, i, n, m};
}

TEST(WerAlign, HandDerived) {
  // One word dropped: 5 hits, 1 deletion.
  EXPECT_EQ(counts("the cat sat on the mat", "the cat sat on mat"), make(5, 0, 1, 0, 6, 5));
  // Empty hypothesis: every reference word is a deletion.
  EXPECT_EQ(counts("a b c", ""), make(0, 0, 3, 0, 3, 0));
  // Empty reference: every hypothesis word is an insertion.
  EXPECT_EQ(counts("", "a b"), make(0, 0, 0, 2, 0, 2));
  EXPECT_EQ(counts("", ""), make(0, 0, 0, 0, 0, 0));
  // All insertions around the reference: x a y b z → a, b match, x y z inserted.
  EXPECT_EQ(counts("a b", "x a y b z"), make(2, 0, 0, 3, 2, 5));
  // Repeated words: a a a vs a → one hit, two deletions (distance 2).
  EXPECT_EQ(counts("a a a", "a"), make(1, 0, 2, 0, 3, 1));
  // a vs b b b: distance 3 = 1 substitution + 2 insertions (or 1 deletion + 3 insertions = 4: worse).
  EXPECT_EQ(counts("a", "b b b"), make(0, 1, 0, 2, 1, 3));
}

// Ties: several alignments have the fewest edits; the one with the most substitutions is counted.
TEST(WerAlign, TiesPreferSubstitutions) {
  // a b vs b a: {a→b, b→a} = 2 substitutions, or delete a, match b, insert a = 1 D + 1 I. Both 2 edits.
  EXPECT_EQ(counts("a b", "b a"), make(0, 2, 0, 0, 2, 2));
  // a b vs b c: {a→b, b→c} or delete a, match b, insert c: 2 edits either way → 2 S.
  EXPECT_EQ(counts("a b", "b c"), make(0, 2, 0, 0, 2, 2));
  // a b c vs c a b: 3 substitutions cost 3; delete c, match a b, insert c costs 2 → no tie: 1 D + 1 I.
  EXPECT_EQ(counts("a b c", "c a b"), make(2, 0, 1, 1, 3, 3));
  // a b vs b: delete a, match b (1 edit) beats a→b + delete b (2).
  EXPECT_EQ(counts("a b", "b"), make(1, 0, 1, 0, 2, 1));
  // x a vs a y: {x→a, a→y} = 2 S, or delete x, match a, insert y = 1 D + 1 I: tie → 2 S.
  EXPECT_EQ(counts("x a", "a y"), make(0, 2, 0, 0, 2, 2));
}

TEST(WerNormalize, Rules) {
  EXPECT_EQ(wer_normalize("Hello, World!"), "hello world");
  // Apostrophes: kept between letters/numbers (U+2019 becomes '), otherwise a separator.
  EXPECT_EQ(wer_normalize("Don\u2019t stop, rock'n'roll 'tis the students' 7'8 ''"),
            "don't stop rock'n'roll tis the students 7'8");
  // Punctuation and symbols separate words (so 3.14 is two words, e-mail too).
  EXPECT_EQ(wer_normalize("e-mail 3.14 $20 20% \u201cquoted\u201d (aside) \u00a1hola! \u2026"),
            "e mail 3 14 20 20 quoted aside hola");
  // NFKC: composed = decomposed, ligatures, full-width, superscripts, roman numerals.
  EXPECT_EQ(wer_normalize("cafe\u0301 \ufb01sh \uff21\uff22\uff23 x\u00b2 \u2163"),
            "caf\u00e9 fish abc x2 iv");
  // Python str.lower(): İ → i + U+0307; final sigma.
  EXPECT_EQ(wer_normalize("\u0130 \u039f\u0394\u039f\u03a3"), "i\u0307 \u03bf\u03b4\u03bf\u03c2");
  // Format characters vanish (soft hyphen, zero-width space); other controls and Unicode spaces separate.
  EXPECT_EQ(wer_normalize("co\u00adop zero\u200bwidth a\x01"
                          "b c\td\u3000e\u00a0f"),
            "coop zerowidth a b c d e f");
  // Scripts without case or spaces pass through.
  EXPECT_EQ(wer_normalize("\u4e2d\u6587 \u0928\u092e\u0938\u094d\u0924\u0947"),
            "\u4e2d\u6587 \u0928\u092e\u0938\u094d\u0924\u0947");
  EXPECT_EQ(wer_normalize(" .,!? "), "");
  // Invalid UTF-8 is not an error: the bad byte stays part of its word (no NFKC for that string).
  EXPECT_EQ(wer_normalize("Caf\xc3 OK"), "caf\xc3 ok");
}

TEST(WerNormalize, NoneIsWhitespaceSplit) {
  EXPECT_EQ(counts("Hello, World!", "hello world", WerNormalization::None), make(0, 2, 0, 0, 2, 2));
  EXPECT_EQ(counts("Hello, World!", "hello world"), make(2, 0, 0, 0, 2, 2));
  EXPECT_EQ(wer_words(" a\tb\n", WerNormalization::None), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*parse_wer_normalization("none"), WerNormalization::None);
  EXPECT_EQ(*parse_wer_normalization("basic"), WerNormalization::Basic);
  EXPECT_FALSE(parse_wer_normalization("whisper").ok());
}

// Corpus WER is Σ edits / Σ reference words: (1 + 0) / (1 + 4) = 0.2, not the mean of 1.0 and 0.0.
TEST(WerCorpus, SumsNotMeans) {
  auto r = corpus_wer({"a", "a b c d"}, {"b", "a b c d"});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->wer, 0.2);
  EXPECT_EQ(r->counts, make(4, 1, 0, 0, 5, 5));
  // An empty reference inside a corpus counts its hypothesis words as insertions: (3 D + 2 I) / 3.
  auto e = corpus_wer({"a b c", ""}, {"", "x y"});
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->wer, 5.0 / 3.0);
  // No reference words at all: 0 when nothing was hypothesised, undefined otherwise.
  auto z = corpus_wer({"", "..."}, {"", "!"});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->wer, 0.0);
  EXPECT_FALSE(corpus_wer({""}, {"x"}).ok());
  EXPECT_FALSE(corpus_wer({"a"}, {"a", "b"}).ok());
  auto empty = corpus_wer({}, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->wer, 0.0);
}

TEST(WerAlign, RefusesHugeAlignments) {
  const std::vector<std::string> big(40000, "w");  // 40000² = 1.6e9 cells > 2^30
  auto r = align_words(big, big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("exceeds the limit"), std::string::npos) << r.error().message();
  // One side empty: no cells, allowed at any size.
  auto d = align_words(big, {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deletions, 40000);
}

TEST(WerGolden, MatchesPythonImplementation) {
  const std::string path = std::string(GPSTREAM_SOURCE_DIR) + "/tests/eval/data/wer_golden.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::string line;
  int n = 0;
  std::vector<std::string> refs, hyps;
  WerCounts total;
  while (std::getline(in, line)) {
    ++n;
    const auto j = nlohmann::json::parse(line);
    const auto ref = j["ref"].get<std::string>(), hyp = j["hyp"].get<std::string>();
    const auto norm = *parse_wer_normalization(j["norm"].get<std::string>());
    EXPECT_EQ(wer_words(ref, norm), j["ref_words"].get<std::vector<std::string>>()) << "case " << n;
    EXPECT_EQ(wer_words(hyp, norm), j["hyp_words"].get<std::vector<std::string>>()) << "case " << n;
    const WerCounts want{j["H"].get<int64_t>(), j["S"].get<int64_t>(), j["D"].get<int64_t>(),
                         j["I"].get<int64_t>(), j["N"].get<int64_t>(), j["M"].get<int64_t>()};
    auto got = wer_counts(ref, hyp, norm);
    ASSERT_TRUE(got.ok()) << "case " << n;
    EXPECT_EQ(*got, want) << "case " << n << ": " << line;
    if (norm == WerNormalization::Basic) {
      refs.push_back(ref);
      hyps.push_back(hyp);
      total += want;
    }
  }
  EXPECT_EQ(n, 313);
  auto corpus = corpus_wer(refs, hyps);
  ASSERT_TRUE(corpus.ok());
  EXPECT_EQ(corpus->counts, total);
  EXPECT_DOUBLE_EQ(corpus->wer,
                   static_cast<double>(total.edits()) / static_cast<double>(total.reference_words));
}

}  // namespace
}  // namespace gpstream::eval
