// Input handling of the bleu/chrf commands (sacreBLEU CLI semantics) and sacreBLEU's JSON layout
// (Score.format(is_json=True) = json.dumps(d, indent=1, ensure_ascii=False), checked against the
// dict sacreBLEU builds: name, score, signature, verbose_score, then the signature fields).
#include "eval/text_lines.h"

#include <gtest/gtest.h>

namespace gpstream::eval {
namespace {

TEST(TextLines, SplitAndRstrip) {
  auto a = split_text_lines("a b \r\nc\u3000\n\nlast", "f", true);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<std::string>{"a b", "c", "", "last"}));
  auto b = split_text_lines("x \n", "f", false);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<std::string>{"x "}));
  auto bad = split_text_lines("ok\nbad\xff\n", "f", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("f:2"), std::string::npos);
}

TEST(TextLines, ChecksCountsAndEmptyReferences) {
  EXPECT_TRUE(check_hyps_and_refs({"a", "b"}, "hyp", {{"a", "b"}}, {"ref"}).ok());
  auto m = check_hyps_and_refs({"a", "b"}, "hyp", {{"a"}}, {"ref"});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("hyp has 2 lines but ref has 1"), std::string::npos);
  auto e = check_hyps_and_refs({"a", "b"}, "hyp", {{"a", ""}}, {"ref"});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("ref:2"), std::string::npos);
  // Variable references: empty in one stream only is allowed.
  EXPECT_TRUE(check_hyps_and_refs({"a", "b"}, "hyp", {{"a", ""}, {"a", "b"}}, {"r1", "r2"}).ok());
}

TEST(SacrebleuJson, Layout) {
  EXPECT_EQ(
      format_sacrebleu_json("BLEU", "48.5", "nrefs:1|case:mixed|version:2.6.0", "82.4 (BP = 1.000)"),
      "{\n \"name\": \"BLEU\",\n \"score\": 48.5,\n \"signature\": \"nrefs:1|case:mixed|version:2.6.0\",\n"
      " \"verbose_score\": \"82.4 (BP = 1.000)\",\n \"nrefs\": \"1\",\n \"case\": \"mixed\",\n"
      " \"version\": \"2.6.0\"\n}");
  EXPECT_EQ(json_string_utf8("\u00e9\"\n\x01"), "\"\u00e9\\\"\\n\\u0001\"");
}

}  // namespace
}  // namespace gpstream::eval
