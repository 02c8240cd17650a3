// Transcript → CTC labels, by hand.
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

}  // namespace
}  // namespace gpstream::speech
