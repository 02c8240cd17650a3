// Tokenizer tests. Expected outputs: metrics.md B.1's table (run on sacreBLEU HEAD), and cases
// derived by hand from the regex definitions (derivation in the comment of each row).
#include "eval/tokenizers.h"

#include <gtest/gtest.h>

#include "eval/unicode_text.h"

namespace gpstream::eval {
namespace {

struct TokCase {
  const char* input;
  const char* tok13a;
  const char* intl;
};

class TokenizerTableTest : public ::testing::TestWithParam<TokCase> {};

TEST_P(TokenizerTableTest, MatchesSacrebleu) {
  const auto& c = GetParam();
  EXPECT_EQ(tokenize_13a(c.input), c.tok13a) << "13a on: " << c.input;
  EXPECT_EQ(tokenize_intl(c.input), c.intl) << "intl on: " << c.input;
}

// metrics.md B.1 edge-case table [ran on sacreBLEU HEAD].
INSTANTIATE_TEST_SUITE_P(
    MetricsMdB1, TokenizerTableTest,
    ::testing::Values(
        TokCase{"It's 3.14 and 1,000 people.", "It's 3.14 and 1,000 people .",
                "It ' s 3.14 and 1,000 people ."},
        TokCase{"The year 2019.", "The year 2019 .", "The year 2019."},
        TokCase{"e-mail: a@b.com (test)", "e-mail : a @ b . com ( test )", "e - mail : a @ b . com ( test )"},
        TokCase{"5-3=2 isn't 10-20", "5 - 3 = 2 isn't 10 - 20", "5-3 = 2 isn ' t 10-20"},
        TokCase{"a..b", "a . . b", "a . . b"},
        TokCase{"\"quoted\" &amp; &lt;tag&gt; &quot;x&quot;", "\" quoted \" & < tag > \" x \"",
                "\" quoted \" & amp ; & lt ; tag & gt ; & quot ; x & quot ;"},
        TokCase{"Mr. Smith's $100 (approx.)", "Mr . Smith's $ 100 ( approx . )",
                "Mr . Smith ' s $ 100 ( approx . )"},
        TokCase{"U.S. 2.5%", "U . S . 2.5 %", "U . S . 2.5%"},
        TokCase{"\u201cSmart quotes\u201d \u2014 em dash\u2026",
                "\u201cSmart quotes\u201d \u2014 em dash\u2026",
                "\u201c Smart quotes \u201d \u2014 em dash \u2026"},
        TokCase{"Z\u00fcrich, 12.05.2020: \u00a1Hola!", "Z\u00fcrich , 12.05.2020 : \u00a1Hola !",
                "Z\u00fcrich , 12.05.2020 : \u00a1 Hola !"}));

// Hand derivations from the definitions (metrics.md B.1).
INSTANTIATE_TEST_SUITE_P(
    HandDerived, TokenizerTableTest,
    ::testing::Values(
        // 13a: "é," is (non-digit)(,) → "é , "; "e." likewise; nothing else is in the ASCII set.
        // intl: é (Ll) + ',' (Po) → split; 'e' + '.' → split. Same result.
        TokCase{"Caf\u00e9, na\u00efve.", "Caf\u00e9 , na\u00efve .", "Caf\u00e9 , na\u00efve ."},
        // CJK with the ideographic full stop U+3002 (Po): 13a never touches non-ASCII; intl pass 1
        // splits (京 is Lo, not N)(。 is Po) → "東京 。".
        TokCase{"\u6771\u4eac\u3002", "\u6771\u4eac\u3002", "\u6771\u4eac \u3002"},
        // Symbols: € (Sc), + (Sm), © (So) are each padded by intl pass 3; 13a pads only the ASCII '+'.
        TokCase{"\u20ac5 + \u00a9", "\u20ac5 + \u00a9", "\u20ac 5 + \u00a9"},
        // Arabic-Indic digits (Nd) around '.' (Po): neither intl pass matches (N on the far side),
        // 13a: [^0-9] is ASCII-only, so '٣' counts as a non-digit and "٣." splits, then ".١" too.
        TokCase{"\u0663.\u0661\u0664", "\u0663 . \u0661\u0664", "\u0663.\u0661\u0664"},
        // No-break space and ideographic space are Python whitespace: both tokenizers' final
        // split() separates on them. Zero-width space (Cf, not whitespace) stays inside the token.
        TokCase{"a\u00a0b\u3000c\u200bd", "a b c\u200bd", "a b c\u200bd"},
        // 13a: "-\n" is deleted and "\n" becomes a space before anything else; "<skipped>" vanishes.
        TokCase{"e-\nmail<skipped>\nx", "email x", "e - mail < skipped > x"},
        // 13a: digit then '-' → "1 - "; intl: '-' (Pd) between digits is kept (both sides N).
        TokCase{"1-2", "1 - 2", "1-2"},
        // Empty and whitespace-only lines.
        TokCase{"", "", ""}, TokCase{" \t ", "", ""}));

TEST(TokenizerChar, JoinsCodePointsWithSpaces) {
  // " ".join("日本 語") = "日 本   語" (the space character itself is joined too).
  EXPECT_EQ(tokenize_char("\u65e5\u672c \u8a9e"), "\u65e5 \u672c   \u8a9e");
  EXPECT_EQ(tokenize_char("ab"), "a b");
  EXPECT_EQ(tokenize_char(""), "");
}

TEST(TokenizerNone, Identity) {
  EXPECT_EQ(tokenize_none("  a  b "), "  a  b ");
}

TEST(TokenizerNames, ParseAndName) {
  EXPECT_EQ(*parse_tokenizer("13a"), BleuTokenizer::Tok13a);
  EXPECT_EQ(*parse_tokenizer("intl"), BleuTokenizer::Intl);
  EXPECT_EQ(*parse_tokenizer("char"), BleuTokenizer::Char);
  EXPECT_EQ(*parse_tokenizer("none"), BleuTokenizer::None);
  EXPECT_FALSE(parse_tokenizer("zh").ok());
  EXPECT_FALSE(parse_tokenizer("bogus").ok());
  EXPECT_EQ(tokenizer_name(BleuTokenizer::Tok13a), "13a");
}

// Python str semantics (expected values from CPython 3.11: 'İSTANBUL'.lower() etc.).
TEST(PythonText, LowerSplitStrip) {
  EXPECT_EQ(python_lower("\u0130STANBUL"), "i\u0307stanbul");
  EXPECT_EQ(python_lower("\u039f\u0394\u039f\u03a3"), "\u03bf\u03b4\u03bf\u03c2");  // final sigma
  EXPECT_EQ(python_lower("\u03a3\u0391"), "\u03c3\u03b1");                          // not final
  EXPECT_EQ(python_lower("\u03a3"), "\u03c3");                                      // alone
  EXPECT_EQ(python_lower("\u0391\u03a3."), "\u03b1\u03c2.");                        // '.' is case-ignorable
  EXPECT_EQ(python_lower("\u01c4"), "\u01c6");
  EXPECT_EQ(python_lower("ABC d\u00c9"), "abc d\u00e9");
  const auto parts = python_split(
      "a\u00a0b\u3000c\u200bd\x1f"
      "e");
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[2], "c\u200bd");
  EXPECT_EQ(python_rstrip("ab \u3000\n"), "ab");
  EXPECT_EQ(python_strip("\u00a0 x y \t"), "x y");
  EXPECT_EQ(python_strip("   "), "");
}

TEST(PythonText, InvalidUtf8IsKeptNotCrashed) {
  const std::string bad =
      "a\xff"
      "b\xc3";
  EXPECT_FALSE(is_valid_utf8(bad));
  EXPECT_TRUE(is_valid_utf8("\u00e9\U0001F600"));
  EXPECT_EQ(utf8_length(bad), 4u);
  EXPECT_EQ(tokenize_intl(bad), bad);
  EXPECT_EQ(tokenize_13a(bad), bad);
  EXPECT_EQ(python_lower("A\xff"), "a\xff");
}

TEST(UnicodeCategories, FromUtf8proc) {
  EXPECT_TRUE(is_unicode_punctuation(U'\u3002'));
  EXPECT_TRUE(is_unicode_punctuation(U'\u00a1'));
  EXPECT_TRUE(is_unicode_symbol(U'$'));
  EXPECT_TRUE(is_unicode_symbol(U'\u20ac'));
  EXPECT_TRUE(is_unicode_number(U'\u0663'));
  EXPECT_TRUE(is_unicode_number(U'\u00bd'));  // No
  EXPECT_FALSE(is_unicode_number(U'a'));
  EXPECT_STRNE(unicode_version(), "");
}

}  // namespace
}  // namespace gpstream::eval
