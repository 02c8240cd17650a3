// Tokenizers and Python string primitives against tests/eval/data/tokenizer_golden.jsonl: 400
// seeded random strings mixing ASCII and Unicode punctuation/symbols/numbers, CJK, combining marks
// and Unicode whitespace, run through sacreBLEU's 13a/intl/char definitions with Python's `re` and
// `regex` and through str.lower()/split() (scripts/gen_eval_tokenizer_golden.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "eval/tokenizers.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {
namespace {

TEST(TokenizerGolden, MatchesPythonOracle) {
  const std::string path = std::string(GPSTREAM_SOURCE_DIR) + "/tests/eval/data/tokenizer_golden.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::string line;
  int n = 0, failures = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto j = nlohmann::json::parse(line);
    const std::string s = j["in"].get<std::string>();
    const std::string_view rs = python_rstrip(s);
    auto check = [&](const std::string& got, const char* key) {
      const std::string want = j[key].get<std::string>();
      if (got != want && failures++ < 10) {
        ADD_FAILURE() << "line " << n << " " << key << ": input " << nlohmann::json(s).dump() << "\n  want "
                      << nlohmann::json(want).dump() << "\n  got  " << nlohmann::json(got).dump();
      }
    };
    check(tokenize_13a(rs), "13a");
    check(tokenize_intl(rs), "intl");
    check(tokenize_char(s), "char");
    check(python_lower(s), "lower");
    std::vector<std::string> split;
    for (auto w : python_split(s)) split.emplace_back(w);
    if (split != j["split"].get<std::vector<std::string>>() && failures++ < 10) {
      ADD_FAILURE() << "line " << n << " split differs for " << nlohmann::json(s).dump();
    }
  }
  EXPECT_EQ(n, 400);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace gpstream::eval
