// Components the four fixture tokenizers do not use (Metaspace, lstrip/rstrip/single_word/normalized added
// tokens, Lowercase/NFKC/Strip/StripAccents, every Split behavior, Digits, Whitespace, unk handling,
// Template/Roberta post-processors, ignore_merges off...), checked against the oracle: each variant of
// tests/tokenizer/data/variants.json is a base tokenizer with parts replaced; scripts/make-tokenizer-fixtures
// builds the same files and runs the Hugging Face library on them.
#include <nlohmann/json.hpp>

#include "test_data.h"
#include "tokenizer/detokenizer.h"

namespace gpstream::tokenizer {
namespace {

using namespace testing;
using nlohmann::json;

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

class Variants : public ::testing::TestWithParam<std::string> {};

TEST_P(Variants, MatchesOracle) {
  json specs = json::parse(read_text(data_dir() + "/variants.json"));
  json spec;
  for (const auto& v : specs) {
    if (v["name"] == GetParam()) spec = v;
  }
  ASSERT_FALSE(spec.is_null());
  std::string base = spec["base"];
  if (base != "trained") {
    GPS_SKIP_WITHOUT_FIXTURE(base);
  }
  std::string base_file = base == "trained" ? data_dir() + "/trained/tokenizer.json"
                                            : fixture_tokenizer(base) + "/tokenizer.json";
  json t = json::parse(read_text(base_file));
  if (spec.contains("set")) {
    for (auto it = spec["set"].begin(); it != spec["set"].end(); ++it) t[it.key()] = it.value();
  }
  if (spec.contains("model")) {
    for (auto it = spec["model"].begin(); it != spec["model"].end(); ++it) t["model"][it.key()] = it.value();
  }
  if (spec.contains("add_tokens")) {
    for (const auto& a : spec["add_tokens"]) t["added_tokens"].push_back(a);
  }
  auto tok = Tokenizer::from_json_text(t.dump());
  ASSERT_TRUE(tok.ok()) << tok.error().message();

  auto inputs = split_lines(read_text(data_dir() + "/variants.inputs.jsonl"));
  auto outputs = split_lines(read_text(data_dir() + "/variants/" + GetParam() + ".jsonl"));
  ASSERT_EQ(inputs.size(), outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto in = json::parse(inputs[i]);
    std::string text = in.is_string() ? in.get<std::string>() : from_hex(in["hex"].get<std::string>());
    auto o = json::parse(outputs[i]);
    std::string where = GetParam() + " input " + std::to_string(i) + " " + inputs[i].substr(0, 60);
    auto ids = o["ids"].get<std::vector<int32_t>>(), special = o["special"].get<std::vector<int32_t>>();
    EXPECT_EQ(show_ids(tok->encode(text, false)), show_ids(ids)) << where;
    EXPECT_EQ(show_ids(tok->encode(text, true)), show_ids(special)) << where << " (special)";
    std::string decoded = o["decoded"];
    EXPECT_EQ(tok->decode(ids), decoded) << where << " (decode)";
    EXPECT_EQ(tok->decode(special), o["special_decoded"].get<std::string>()) << where << " (decode special)";
    IncrementalDetokenizer d(*tok);
    std::string streamed;
    for (int32_t id : ids) streamed += d.push(id).text;
    streamed += d.flush();
    EXPECT_EQ(streamed, decoded) << where << " (incremental)";
  }
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& v : json::parse(read_text(data_dir() + "/variants.json"))) names.push_back(v["name"]);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, Variants, ::testing::ValuesIn(variant_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
});

}  // namespace
}  // namespace gpstream::tokenizer
