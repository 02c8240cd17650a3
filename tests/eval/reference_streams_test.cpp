// check_reference_streams: sacreBLEU's conditions on reference streams, and what BLEU and chrF report
// through it (counts derived by hand).
#include "eval/reference_streams.h"

#include <gtest/gtest.h>

#include "eval/bleu.h"
#include "eval/chrf.h"

namespace gpstream::eval {
namespace {

bool mentions(const Error& e, const std::string& text) {
  return e.message().find(text) != std::string::npos;
}

TEST(ReferenceStreams, CountsReferencesPerSegment) {
  // Two streams, both filled: 2 references everywhere.
  auto both = check_reference_streams("BLEU", 2, {{"a", "b"}, {"c", "d"}});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, 2);
  // The second stream's first line empty: segment 1 has 1 reference, segment 2 has 2 → variable.
  auto var = check_reference_streams("BLEU", 2, {{"a", "b"}, {"", "d"}});
  ASSERT_TRUE(var.ok());
  EXPECT_EQ(*var, -1);
  // No hypotheses: the number of streams.
  auto none = check_reference_streams("chrF", 0, {{}, {}, {}});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 3);
}

TEST(ReferenceStreams, RejectsWhatSacreBleuRejects) {
  auto no_stream = check_reference_streams("BLEU", 1, {});
  ASSERT_FALSE(no_stream.ok());
  EXPECT_TRUE(mentions(no_stream.error(), "BLEU: no reference stream given"));
  auto short_stream = check_reference_streams("chrF", 3, {{"a", "b", "c"}, {"a", "b"}});
  ASSERT_FALSE(short_stream.ok());
  EXPECT_TRUE(mentions(short_stream.error(), "chrF: the hypotheses have 3 lines but reference 2 has 2"));
  auto empty = check_reference_streams("BLEU", 3, {{"a", "b", ""}, {"a", "b", ""}});
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(mentions(empty.error(), "BLEU: empty reference for segment 3"));
}

TEST(ReferenceStreams, BleuAndChrfReportThroughIt) {
  const std::vector<std::string> hyps = {"the cat sat", "a dog"};
  auto bleu = bleu_corpus_stats(hyps, {{"the cat sat", ""}}, BleuOptions{});
  ASSERT_FALSE(bleu.ok());
  EXPECT_TRUE(mentions(bleu.error(), "BLEU: empty reference for segment 2"));
  int n_refs = 0;
  auto chrf = chrf_corpus_stats(hyps, {{"the cat sat", "a dog"}, {"", "one dog"}}, ChrfOptions{}, &n_refs);
  ASSERT_TRUE(chrf.ok());
  EXPECT_EQ(n_refs, -1);
  auto chrf_short = chrf_corpus_stats(hyps, {{"the cat sat"}}, ChrfOptions{});
  ASSERT_FALSE(chrf_short.ok());
  EXPECT_TRUE(mentions(chrf_short.error(), "chrF: the hypotheses have 2 lines but reference 1 has 1"));
}

}  // namespace
}  // namespace gpstream::eval
