// Transcript ↔ CTC labels and greedy CTC decoding, by hand.
#include "speech/ctc_alphabet.h"

#include <gtest/gtest.h>

namespace gpstream::speech {
namespace {

TEST(CtcAlphabet, LettersApostrophesAndCollapsedBoundaries) {
  // o=15 p=16 e=5 n=14, space 28, i=9 t=20, n o w
  EXPECT_EQ(ctc_labels("Open it, now!"), (std::vector<int32_t>{15, 16, 5, 14, 28, 9, 20, 28, 14, 15, 23}));
  EXPECT_EQ(ctc_labels("  Don't -- stop.  "), (std::vector<int32_t>{4, 15, 14, 27, 20, 28, 19, 20, 15, 16}));
  EXPECT_EQ(ctc_labels("Z"), (std::vector<int32_t>{26}));
  EXPECT_TRUE(ctc_labels("").empty());
  EXPECT_TRUE(ctc_labels("?! 42").empty());
  EXPECT_EQ(ctc_labels("a\xC3\xA9z"), (std::vector<int32_t>{1, 28, 26}));  // é (non-ASCII) is a boundary
}

TEST(CtcAlphabet, TextOfLabels) {
  EXPECT_EQ(ctc_text(ctc_labels("Don't -- stop, Zed.")), "don't stop zed");
  EXPECT_EQ(ctc_text({0, 1, 29, -3, 28, 26, 27}), "a z'");  // blank and out-of-range labels skipped
  EXPECT_EQ(ctc_text({}), "");
}

TEST(CtcAlphabet, GreedyDecodingMergesRunsAndDropsBlanks) {
  // Best labels per frame: a a blank a b b space space c blank blank, and a tie (b and c) taking b.
  const std::vector<int32_t> best = {1, 1, 0, 1, 2, 2, 28, 28, 3, 0, 0, -2};
  std::vector<float> scores(best.size() * kCtcAlphabetSize, -1.0f);
  for (size_t t = 0; t < best.size(); ++t) {
    float* row = scores.data() + t * kCtcAlphabetSize;
    if (best[t] >= 0)
      row[best[t]] = 2.0f + static_cast<float>(t);
    else
      row[2] = row[3] = 0.5f;  // the tie
  }
  EXPECT_EQ(ctc_greedy_labels(scores.data(), static_cast<int64_t>(best.size())),
            (std::vector<int32_t>{1, 1, 2, 28, 3, 2}));
  EXPECT_EQ(ctc_text(ctc_greedy_labels(scores.data(), static_cast<int64_t>(best.size()))), "aab cb");
  EXPECT_TRUE(ctc_greedy_labels(scores.data(), 0).empty());
}

}  // namespace
}  // namespace gpstream::speech
