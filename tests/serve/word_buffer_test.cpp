// WordBuffer: chunks cut anywhere give the words tokenizer::split_words gives for the whole text.
#include "serve/word_buffer.h"

#include <gtest/gtest.h>

#include "tokenizer/segment_encoder.h"

namespace gpstream::serve {
namespace {

std::vector<std::string> feed(const std::vector<std::string>& chunks) {
  WordBuffer b;
  std::vector<std::string> out;
  for (const auto& c : chunks)
    for (auto& w : b.append(c)) out.push_back(std::move(w));
  for (auto& w : b.finish()) out.push_back(std::move(w));
  return out;
}

TEST(WordBuffer, HoldsBackTheUnfinishedWord) {
  WordBuffer b;
  EXPECT_TRUE(b.append("Hel").empty());
  EXPECT_EQ(b.pending_bytes(), 3u);
  EXPECT_EQ(b.append("lo wor"), std::vector<std::string>({"Hello"}));
  EXPECT_EQ(b.append("ld  "), std::vector<std::string>({"world"}));
  EXPECT_EQ(b.pending_bytes(), 0u);
  EXPECT_TRUE(b.finish().empty());
}

TEST(WordBuffer, EveryCutOfATextGivesSplitWords) {
  // Multi-byte letters, a no-break space U+00A0 and an ideographic space U+3000 (Unicode White_Space),
  // tabs and newlines: every cut point, even inside a UTF-8 sequence, gives split_words of the text.
  const std::string text =
      "Le\xC2\xA0"
      "café\tdéjà  vu\n\xE3\x80\x80"
      "終わり. fin";
  const auto want = tokenizer::split_words(text);
  ASSERT_EQ(want.size(), 6u);
  for (size_t a = 0; a <= text.size(); ++a)
    for (size_t b = a; b <= text.size(); b += 3)
      EXPECT_EQ(feed({text.substr(0, a), text.substr(a, b - a), text.substr(b)}), want) << a << " " << b;
}

TEST(WordBuffer, FinishFlushesTheLastWord) {
  WordBuffer b;
  EXPECT_EQ(b.append("one two"), std::vector<std::string>({"one"}));
  EXPECT_EQ(b.finish(), std::vector<std::string>({"two"}));
  EXPECT_TRUE(b.finish().empty());
}

}  // namespace
}  // namespace gpstream::serve
