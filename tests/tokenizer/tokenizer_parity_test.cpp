// Parity with the Hugging Face `tokenizers` library (the oracle): ids with and without special tokens and
// decoded text, for the four fixture tokenizers on every dev line of the three corpora and on the edge
// cases. Expected values: tests/tokenizer/data/, made by scripts/make-tokenizer-fixtures.
#include <nlohmann/json.hpp>

#include "fixture_checks.h"
#include "test_data.h"

namespace gpstream::tokenizer {
namespace {

using namespace testing;

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<int32_t> to_ids(const nlohmann::json& j) {
  return j.get<std::vector<int32_t>>();
}

void check_dev(const std::string& name) {
  const Tokenizer& tok = load_fixture(name);
  std::vector<std::string> lines = dev_lines();
  std::vector<std::string> expected = split_lines(read_text(data_dir() + "/" + name + ".dev.ids"));
  ASSERT_EQ(lines.size(), expected.size()) << "dev line count differs from " << name << ".dev.ids";
  std::vector<std::string> special = split_lines(read_text(data_dir() + "/" + name + ".special"));
  ASSERT_EQ(special.size(), 2u);
  std::vector<int32_t> prefix = parse_ids(special[0].substr(7)), suffix = parse_ids(special[1].substr(7));
  std::map<size_t, std::string> decoded;
  for (const auto& l : split_lines(read_text(data_dir() + "/" + name + ".dev.decoded"))) {
    size_t tab = l.find('\t');
    decoded[std::stoul(l.substr(0, tab))] = nlohmann::json::parse(l.substr(tab + 1)).get<std::string>();
  }
  size_t failures = 0;
  for (size_t i = 0; i < lines.size() && failures < 5; ++i) {
    std::vector<int32_t> want = parse_ids(expected[i]);
    std::vector<int32_t> got = tok.encode(lines[i], false);
    if (got != want) {
      ++failures;
      ADD_FAILURE() << name << " dev line " << i << " \"" << lines[i] << "\"\n  want " << show_ids(want)
                    << "\n  got  " << show_ids(got);
      continue;
    }
    std::vector<int32_t> want_special = prefix;
    want_special.insert(want_special.end(), want.begin(), want.end());
    want_special.insert(want_special.end(), suffix.begin(), suffix.end());
    EXPECT_EQ(tok.encode(lines[i], true), want_special)
        << name << " dev line " << i << " with special tokens";
    auto d = decoded.find(i);
    const std::string& want_text = d == decoded.end() ? lines[i] : d->second;
    std::string got_text = tok.decode(want);
    if (got_text != want_text) {
      ++failures;
      ADD_FAILURE() << name << " dev line " << i << " decode\n  want \"" << want_text << "\"\n  got  \""
                    << got_text << "\"";
    }
  }
}

void check_edge(const std::string& name) {
  const Tokenizer& tok = load_fixture(name);
  std::vector<std::string> inputs = split_lines(read_text(data_dir() + "/edge_cases.jsonl"));
  std::vector<std::string> outputs = split_lines(read_text(data_dir() + "/" + name + ".edge.jsonl"));
  ASSERT_EQ(inputs.size(), outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto in = nlohmann::json::parse(inputs[i]);
    std::string text = in.is_string() ? in.get<std::string>() : from_hex(in["hex"].get<std::string>());
    auto out = nlohmann::json::parse(outputs[i]);
    std::string where = name + " edge case " + std::to_string(i) + " " + inputs[i].substr(0, 60);
    std::vector<int32_t> ids = to_ids(out["ids"]), special = to_ids(out["special"]);
    EXPECT_EQ(show_ids(tok.encode(text, false)), show_ids(ids)) << where;
    EXPECT_EQ(show_ids(tok.encode(text, true)), show_ids(special)) << where << " (special)";
    EXPECT_EQ(tok.decode(ids), out["decoded"].get<std::string>()) << where << " (decode)";
    EXPECT_EQ(tok.decode(special), out["special_decoded"].get<std::string>()) << where << " (decode special)";
  }
}

}  // namespace

void check_parity(const std::string& name) {
  check_dev(name);
  check_edge(name);
}

namespace {}  // namespace
}  // namespace gpstream::tokenizer
