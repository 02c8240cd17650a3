// Display width, sanitizing and word wrapping (util/text_wrap.h) against rows derived by hand: each expected
// row below was found by adding word widths plus one space at a time until the next word passed the width.
// Covers 40, 80 and 200 columns, multi-byte UTF-8 (accented letters: 2 bytes, 1 column; CJK: 3 bytes, 2
// columns; combining marks: 0 columns), words cut because they are wider than a row, and the rows a
// terminal needs once it has re-flowed rows drawn for a wider one.
#include "util/text_wrap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpstream {
namespace {

using util::TextRow;

// Rows as (text, width) pairs, for readable failures.
std::vector<std::pair<std::string, size_t>> as_pairs(const std::vector<TextRow>& rows) {
  std::vector<std::pair<std::string, size_t>> out;
  for (const TextRow& r : rows) out.emplace_back(r.text, r.width);
  return out;
}

using Rows = std::vector<std::pair<std::string, size_t>>;

TEST(TextWrap, CharWidth) {
  EXPECT_EQ(util::char_width(U'a'), 1u);
  EXPECT_EQ(util::char_width(U'\u00E9'), 1u);      // é
  EXPECT_EQ(util::char_width(U'\u0301'), 0u);      // combining acute accent
  EXPECT_EQ(util::char_width(U'\u4E2D'), 2u);      // 中
  EXPECT_EQ(util::char_width(U'\uFF21'), 2u);      // fullwidth A
  EXPECT_EQ(util::char_width(U'\U0001F600'), 2u);  // grinning face emoji
}

TEST(TextWrap, DisplayWidthCountsColumnsNotBytes) {
  EXPECT_EQ(util::display_width(""), 0u);
  EXPECT_EQ(util::display_width("Le fichier."), 11u);
  EXPECT_EQ(util::display_width("caf\u00E9"), 4u);     // 5 bytes
  EXPECT_EQ(util::display_width("cafe\u0301"), 4u);    // 6 bytes: e + combining accent
  EXPECT_EQ(util::display_width("\u4E2D\u6587"), 4u);  // 中文: 6 bytes
  EXPECT_EQ(util::display_width("a\377b"), 3u);        // the invalid byte shows as U+FFFD
  EXPECT_EQ(util::display_width("a\033b"), 3u);        // so does ESC
}

TEST(TextWrap, SanitizeReplacesControlsAndInvalidBytes) {
  const std::string r = "\uFFFD";
  EXPECT_EQ(util::sanitize_for_terminal("a\x1b[2Jb"), "a" + r + "[2Jb");
  EXPECT_EQ(util::sanitize_for_terminal("tab\tnl\n"), "tab" + r + "nl" + r);
  EXPECT_EQ(util::sanitize_for_terminal("\x7f"), r);                  // DEL
  EXPECT_EQ(util::sanitize_for_terminal("\xc2\x9b"), r);              // U+009B, the C1 CSI
  EXPECT_EQ(util::sanitize_for_terminal("\xc3"), r);                  // truncated é
  EXPECT_EQ(util::sanitize_for_terminal("\xc0\xaf"), r + r);          // overlong '/': both bytes rejected
  EXPECT_EQ(util::sanitize_for_terminal("\xed\xa0\x80"), r + r + r);  // a surrogate: three bytes rejected
  EXPECT_EQ(util::sanitize_for_terminal("\xf4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(util::sanitize_for_terminal("fen\u00EAtre \u4E2D \U0001F600"), "fen\u00EAtre \u4E2D \U0001F600");
}

// 26 words, 115 letters and 25 spaces: 140 columns.
const std::string kLong =
    "Click the button at the top of the window to open the settings, then choose a folder and save the "
    "document before you close the application.";

TEST(TextWrap, LongSentenceAt40And80And200Columns) {
  EXPECT_EQ(as_pairs(util::wrap_text(kLong, 200)), (Rows{{kLong, 140}}));
  EXPECT_EQ(as_pairs(util::wrap_text(kLong, 80)),
            (Rows{{"Click the button at the top of the window to open the settings, then choose a", 77},
                  {"folder and save the document before you close the application.", 62}}));
  EXPECT_EQ(as_pairs(util::wrap_text(kLong, 40)), (Rows{{"Click the button at the top of the", 34},
                                                        {"window to open the settings, then choose", 40},
                                                        {"a folder and save the document before", 37},
                                                        {"you close the application.", 26}}));
}

TEST(TextWrap, RowOfExactlyTheWidth) {
  const std::string s = "Save the document in a new folder before you close the window.";  // 51 + 11 spaces
  EXPECT_EQ(as_pairs(util::wrap_text(s, 40)),
            (Rows{{"Save the document in a new folder before", 40}, {"you close the window.", 21}}));
  EXPECT_EQ(as_pairs(util::wrap_text(s, 80)), (Rows{{s, 62}}));
  EXPECT_EQ(as_pairs(util::wrap_text(s, 62)), (Rows{{s, 62}}));
  EXPECT_EQ(as_pairs(util::wrap_text(s, 61)),
            (Rows{{"Save the document in a new folder before you close the", 54}, {"window.", 7}}));
}

TEST(TextWrap, MultiByteUtf8CountsColumns) {
  // 11 + 2 + 8 + 4 + 2 + 7 = 34 letters + 5 spaces = 39; "dossier" would make 47.
  EXPECT_EQ(as_pairs(util::wrap_text(
                "Enregistrez le document dans un nouveau dossier avant de fermer la fen\u00EAtre.", 40)),
            (Rows{{"Enregistrez le document dans un nouveau", 39},
                  {"dossier avant de fermer la fen\u00EAtre.", 35}}));
  // "été" is 3 columns in 5 bytes: two fit in 10 columns (3 + 1 + 3), a third does not (11).
  EXPECT_EQ(as_pairs(util::wrap_text("\u00E9t\u00E9 \u00E9t\u00E9 \u00E9t\u00E9", 10)),
            (Rows{{"\u00E9t\u00E9 \u00E9t\u00E9", 7}, {"\u00E9t\u00E9", 3}}));
  // A combining accent takes no column: "café" written e + U+0301 is 4 wide and fills a 4-column row.
  EXPECT_EQ(as_pairs(util::wrap_text("cafe\u0301 ok", 4)), (Rows{{"cafe\u0301", 4}, {"ok", 2}}));
}

TEST(TextWrap, WideCharactersCountTwoAndNeverStraddleARow) {
  // 中文字符 is 8 columns: 中文 (4) fill a 5-column row as far as they can, 字 would end at column 6.
  EXPECT_EQ(as_pairs(util::wrap_text("\u4E2D\u6587\u5B57\u7B26", 5)),
            (Rows{{"\u4E2D\u6587", 4}, {"\u5B57\u7B26", 4}}));
  // "ab" then a 6-column word: it does not fit after the space (2 + 1 + 6 > 4) nor in a row, so it is cut.
  EXPECT_EQ(as_pairs(util::wrap_text("ab \u4E2D\u6587\u5B57", 4)),
            (Rows{{"ab", 2}, {"\u4E2D\u6587", 4}, {"\u5B57", 2}}));
  // A character wider than the row gets a row of its own.
  EXPECT_EQ(as_pairs(util::wrap_text("\u4E2Da", 1)), (Rows{{"\u4E2D", 2}, {"a", 1}}));
  EXPECT_EQ(as_pairs(util::wrap_text("\U0001F600\U0001F600 ok", 4)),
            (Rows{{"\U0001F600\U0001F600", 4}, {"ok", 2}}));
}

TEST(TextWrap, WordsWiderThanARowAreCut) {
  // The 36-character URL starts its own row and is cut every 10 characters; "ok" fits after its last piece.
  EXPECT_EQ(as_pairs(util::wrap_text("see https://example.com/a/very/long/path ok", 10)),
            (Rows{{"see", 3}, {"https://ex", 10}, {"ample.com/", 10}, {"a/very/lon", 10}, {"g/path ok", 9}}));
  // A combining mark cut off at the end of a row stays with the letter it belongs to.
  EXPECT_EQ(as_pairs(util::wrap_text("abcde\u0301f", 5)), (Rows{{"abcde\u0301", 5}, {"f", 1}}));
}

TEST(TextWrap, SpacesAndEmptyText) {
  EXPECT_EQ(as_pairs(util::wrap_text("", 10)), (Rows{{"", 0}}));
  EXPECT_EQ(as_pairs(util::wrap_text("   ", 10)), (Rows{{"", 0}}));
  EXPECT_EQ(as_pairs(util::wrap_text("  a   b  ", 10)), (Rows{{"a b", 3}}));
  EXPECT_EQ(as_pairs(util::wrap_text("abcd efgh", 4)), (Rows{{"abcd", 4}, {"efgh", 4}}));
  EXPECT_EQ(as_pairs(util::wrap_text("abcd efgh", 9)), (Rows{{"abcd efgh", 9}}));
  // Control characters become U+FFFD before wrapping: one column each.
  EXPECT_EQ(as_pairs(util::wrap_text("a\x1b[A", 10)), (Rows{{"a\uFFFD[A", 4}}));
}

TEST(TextWrap, ReflowedRowsAfterTheTerminalShrinks) {
  const std::vector<TextRow> at80 = util::wrap_text(kLong, 80);  // 77 and 62 columns
  EXPECT_EQ(util::reflowed_rows(at80, 200), 2u);
  EXPECT_EQ(util::reflowed_rows(at80, 80), 2u);
  EXPECT_EQ(util::reflowed_rows(at80, 77), 2u);
  EXPECT_EQ(util::reflowed_rows(at80, 76), 3u);  // 76 + 1, then 62
  EXPECT_EQ(util::reflowed_rows(at80, 40), 4u);  // 40 + 37, 40 + 22
  EXPECT_EQ(util::reflowed_rows(at80, 30), 6u);  // 30 + 30 + 17, 30 + 30 + 2
  // Empty rows take a row each.
  EXPECT_EQ(util::reflowed_rows(std::vector<TextRow>{{"", 0}, {"", 0}}, 10), 2u);
  // a中b中 (6 columns) at 2: a | 中 | b | 中 — a wide character never straddles, so more than 6 / 2 rows.
  EXPECT_EQ(util::reflowed_rows(std::vector<TextRow>{{"a\u4E2Db\u4E2D", 6}}, 2), 4u);
  EXPECT_EQ(util::reflowed_rows(std::vector<TextRow>{{"a\u4E2Db\u4E2D", 6}}, 3), 2u);  // a中 | b中
}

}  // namespace
}  // namespace gpstream
