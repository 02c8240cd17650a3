// Hostile tokenizer.json files: every malformation gives a clear error naming the field, never a crash.
#include <map>
#include <nlohmann/json.hpp>

#include "test_data.h"

namespace gpstream::tokenizer {
namespace {

using nlohmann::json;

json base() {
  return json::parse(R"({
    "version": "1.0",
    "added_tokens": [{"id": 3, "content": "<s>", "special": true, "lstrip": false, "rstrip": false,
                      "single_word": false, "normalized": false}],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "post_processor": {"type": "ByteLevel"},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
  })");
}

// Expects loading `text` to fail with a message containing `needle`.
void expect_text_error(const std::string& text, const std::string& needle) {
  auto t = Tokenizer::from_json_text(text);
  ASSERT_FALSE(t.ok()) << "accepted: " << text.substr(0, 200);
  EXPECT_NE(t.error().message().find(needle), std::string::npos)
      << "message \"" << t.error().message() << "\" lacks \"" << needle << "\"";
}
void expect_error(const json& j, const std::string& needle) {
  expect_text_error(j.dump(), needle);
}

TEST(Malformed, BaseIsValid) {
  auto t = Tokenizer::from_json_text(base().dump());
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->encode("ab<s>"), (std::vector<int32_t>{2, 3}));
}

TEST(Malformed, NotJson) {
  expect_text_error("", "invalid JSON");
  expect_text_error("{\"model\": ", "invalid JSON");
  expect_text_error("[1, 2]", "tokenizer.json: not a JSON object (got array)");
  expect_text_error("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}} trailing", "invalid JSON");
}

TEST(Malformed, WrongTypes) {
  json j = base();
  j.erase("model");
  expect_error(j, "tokenizer.json: missing field 'model'");
  j = base();
  j["model"]["vocab"] = json::array({"a", "b"});
  expect_error(j, "model.vocab");
  j = base();
  j["model"]["vocab"]["a"] = "zero";
  expect_error(j, "model.vocab[\"a\"]");
  j = base();
  j["model"]["vocab"]["a"] = 0.5;
  expect_error(j, "model.vocab[\"a\"]");
  j = base();
  j["model"]["merges"] = json::object();
  expect_error(j, "model.merges");
  j = base();
  j["model"]["byte_fallback"] = "yes";
  expect_error(j, "byte_fallback");
  j = base();
  j["added_tokens"][0]["content"] = 7;
  expect_error(j, "added_tokens[0]");
  j = base();
  j["added_tokens"] = json::object();
  expect_error(j, "added_tokens");
  j = base();
  j["normalizer"] = json::array();
  expect_error(j, "normalizer");
  j = base();
  j["pre_tokenizer"]["use_regex"] = 1;
  expect_error(j, "pre_tokenizer.use_regex");
  j = base();
  j["decoder"] = {{"type", "Sequence"}, {"decoders", "nope"}};
  expect_error(j, "decoder.decoders");
}

TEST(Malformed, Merges) {
  json j = base();
  j["model"].erase("merges");
  expect_error(j, "tokenizer.json: missing field 'model.merges'");
  j = base();
  j["model"]["merges"] = {"a c"};
  expect_error(j, "token \"c\" is not in the vocabulary");
  j = base();
  j["model"]["merges"] = {"b a"};
  expect_error(j, "merged token \"ba\" is not in the vocabulary");
  j = base();
  j["model"]["merges"] = {"ab"};
  expect_error(j, "model.merges[0]");
  j = base();
  j["model"]["merges"] = json::array({json::array({"a", "b", "c"})});
  expect_error(j, "model.merges[0]");
  j = base();
  j["model"]["merges"] = json::array({json::array({"a", 1})});
  expect_error(j, "model.merges[0]");
}

TEST(Malformed, Ids) {
  json j = base();
  j["model"]["vocab"]["a"] = -1;
  expect_error(j, "negative");
  j = base();
  j["model"]["vocab"]["a"] = 1000000000000LL;
  expect_error(j, "too large");
  j = base();
  j["model"]["vocab"]["a"] = 1;  // "a" and "b" share id 1
  expect_error(j, "is given to both");
  j = base();
  // Ids are in [0, BpeModel::kMaxId - 1 = 2^24 - 1 = 16777215].
  j["added_tokens"][0]["id"] = -3;
  expect_error(j, "tokenizer.json: field 'added_tokens[0].id' must be an integer in [0, 16777215], got -3");
  j = base();
  j["added_tokens"][0]["id"] = 99999999999LL;
  expect_error(j, "field 'added_tokens[0].id' must be an integer in [0, 16777215], got 99999999999");
  j = base();
  j["added_tokens"][0]["id"] = 4.5;
  expect_error(j, "field 'added_tokens[0].id' must be an integer, got number");
  j = base();
  j["added_tokens"][0]["id"] = 0;  // id of vocabulary token "a"
  expect_error(j, "belongs to vocabulary token");
  j = base();
  j["added_tokens"].push_back(j["added_tokens"][0]);
  j["added_tokens"][1]["id"] = 4;
  expect_error(j, "appears twice");
  j = base();
  j["post_processor"] =
      json::parse(R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}},
      {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [-5], "tokens": ["<s>"]}}})");
  // The post-processor's ids are below the vocabulary size (4: "a", "b", "ab" and the added "<s>").
  expect_error(j, "field 'post_processor.special_tokens.<s>.ids[0]' must be an integer in [0, 3], got -5");
}

TEST(Malformed, DuplicateVocabularyKey) {
  std::string text = base().dump();
  size_t pos = text.find("\"a\":0");
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos, "\"b\":5,");
  expect_text_error(text, "duplicate entry \"b\"");
}

TEST(Malformed, UnsupportedComponentsAreNamed) {
  json j = base();
  j["normalizer"] = {{"type", "BertNormalizer"}};
  expect_error(j, "unsupported normalizer type \"BertNormalizer\"");
  j = base();
  j["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  expect_error(j, "unsupported pre-tokenizer type \"UnicodeScripts\"");
  j = base();
  j["decoder"] = {{"type", "WordPiece"}};
  expect_error(j, "unsupported decoder type \"WordPiece\"");
  j = base();
  j["post_processor"] = {{"type", "Whatever"}};
  expect_error(j, "unsupported post-processor type \"Whatever\"");
  j = base();
  j["model"]["type"] = "Unigram";
  expect_error(j, "unsupported model type \"Unigram\"");
  j = base();
  j["model"]["dropout"] = 0.1;
  expect_error(j, "dropout");
  j = base();
  j["pre_tokenizer"] =
      json::parse(R"({"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated"})");
  expect_error(j, "pre_tokenizer.pattern");
  j = base();
  j["pre_tokenizer"] =
      json::parse(R"({"type": "Split", "pattern": {"String": "x"}, "behavior": "Sideways"})");
  expect_error(j, "unsupported split behavior \"Sideways\"");
  j = base();
  j["model"]["unk_token"] = "<unk>";
  expect_error(j, "unk_token \"<unk>\" is not in the vocabulary");
}

// base() with `section` replaced by `levels` levels: levels - 1 Sequences around one plain step. Built as
// text: a DOM this deep would be dumped recursively.
std::string nested_sections(const std::string& section, int levels) {
  const std::map<std::string, std::pair<std::string, std::string>> shapes = {
      {"normalizer", {"normalizers", R"({"type":"NFC"})"}},
      {"pre_tokenizer", {"pretokenizers", R"({"type":"Whitespace"})"}},
      {"decoder", {"decoders", R"({"type":"Fuse"})"}},
      {"post_processor", {"processors", R"({"type":"ByteLevel"})"}}};
  const auto& [list, leaf] = shapes.at(section);
  json j = base();
  j.erase(section);
  std::string text = j.dump();
  text.pop_back();  // the closing brace
  text += ",\"" + section + "\":";
  for (int i = 1; i < levels; ++i) text += R"({"type":"Sequence",")" + list + "\":[";
  text += leaf;
  for (int i = 1; i < levels; ++i) text += "]}";
  return text + "}";
}

// Expects `text` to be refused with an error naming the file and the section, as one nested too deep.
void expect_nesting_error(const std::string& text, const std::string& section) {
  auto t = Tokenizer::from_json_text(text, {}, "dir/tokenizer.json");
  ASSERT_FALSE(t.ok()) << section << " accepted";
  const std::string& m = t.error().message();
  EXPECT_EQ(m.rfind("dir/tokenizer.json: " + section + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("nested more than"), std::string::npos) << m;
  EXPECT_LT(m.size(), 300u) << "the error repeats the path of every level: " << m.substr(0, 300);
}

TEST(Malformed, NestedSectionsAreBoundedAndNamed) {
  for (const char* section : {"normalizer", "pre_tokenizer", "decoder", "post_processor"}) {
    auto ok = Tokenizer::from_json_text(nested_sections(section, kMaxSectionDepth));
    ASSERT_TRUE(ok.ok()) << section << ": " << ok.error().message();
    EXPECT_EQ(ok->decode(ok->encode("ab")), "ab") << section;
    expect_nesting_error(nested_sections(section, kMaxSectionDepth + 1), section);
  }
}

// 10,000 levels overflowed the stack of the recursive section parsers (and built a field path per level).
TEST(Malformed, DeeplyNestedSectionsAreRefusedWithoutCrashing) {
  for (const char* section : {"normalizer", "pre_tokenizer", "decoder", "post_processor"})
    expect_nesting_error(nested_sections(section, 10000), section);
  // Deep JSON anywhere else is refused as well (nothing reads it recursively later).
  json j = base();
  std::string text = j.dump();
  text.pop_back();
  text += ",\"truncation\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_nesting_error(text, "truncation");
}

// One id far above the others sized the id → token table by that id (2^24 - 1: 616 MB for 4 tokens).
TEST(Malformed, SparseIdsAreBoundedByTheEntries) {
  const int64_t far = BpeModel::kMaxId - 1;
  json j = base();
  j["model"]["vocab"]["z"] = far;
  expect_error(j, "model: vocab: id " + std::to_string(far) + " of \"z\"");
  j = base();
  j["added_tokens"][0]["id"] = far;
  expect_error(j, "added_tokens: id " + std::to_string(far) + " of \"<s>\"");
  // Up to kMaxUnusedIds ids without a token are accepted: the vocabulary's own table (ids 0-2 and the far
  // one; id 3 is the added token's) may leave that many unused, so may the table of all tokens.
  for (int64_t id : {int64_t{3} + BpeModel::kMaxUnusedIds, int64_t{4} + BpeModel::kMaxUnusedIds}) {
    j = base();
    j["model"]["vocab"]["z"] = id;
    auto t = Tokenizer::from_json_text(j.dump());
    EXPECT_EQ(t.ok(), id < 4 + BpeModel::kMaxUnusedIds) << id;
    j = base();
    j["added_tokens"][0]["id"] = id;
    t = Tokenizer::from_json_text(j.dump());
    EXPECT_EQ(t.ok(), id < 4 + BpeModel::kMaxUnusedIds) << id;
  }
}

TEST(Malformed, EveryTruncationIsRejectedWithoutCrash) {
  std::string text = base().dump();
  for (size_t n = 0; n < text.size(); ++n) {
    auto t = Tokenizer::from_json_text(text.substr(0, n));
    EXPECT_FALSE(t.ok()) << "accepted a truncation to " << n << " bytes";
  }
}

TEST(Malformed, ByteFlipsNeverCrash) {
  // Flip each byte to a few hostile values; the loader may accept or reject, but must not crash,
  // and an accepted tokenizer must encode and decode.
  std::string text = base().dump();
  for (size_t i = 0; i < text.size(); ++i) {
    for (char c : {'\0', '"', '9', '-', '{', '\xff'}) {
      std::string t = text;
      t[i] = c;
      auto tok = Tokenizer::from_json_text(t);
      if (tok.ok()) (void)tok->decode(tok->encode("ab a\xff b<s>"));
    }
  }
}

TEST(Malformed, MissingFiles) {
  auto t = Tokenizer::load("/nonexistent/dir");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("/nonexistent/dir"), std::string::npos);
}

// tokenizer_config.json is a Hugging Face file: keys gpstream does not read are skipped; bos_token and
// eos_token are a token's text or an AddedToken object, and errors name the file and the field.
TEST(Malformed, TokenizerConfig) {
  const std::string text = base().dump();
  auto ok = Tokenizer::from_json_text(
      text,
      R"({"model_max_length": 1e30, "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "ab"})");
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->bos_id(), 3);  // "<s>" is added token 3
  EXPECT_EQ(ok->eos_id(), 2);  // "ab" is vocabulary token 2
  auto message = [&](const std::string& config) {
    auto t = Tokenizer::from_json_text(text, config);
    return t.ok() ? std::string("<accepted>") : t.error().message();
  };
  EXPECT_EQ(message(R"({"bos_token": 5})"),
            "tokenizer_config.json: field 'bos_token' must be a string, got number");
  EXPECT_EQ(message(R"({"eos_token": {"special": true}})"),
            "tokenizer_config.json: missing field 'eos_token.content'");
  EXPECT_EQ(message(R"({"eos_token": "zz"})"),
            "tokenizer_config.json: field 'eos_token' \"zz\" is not a token of tokenizer.json");
  EXPECT_EQ(message("[1]"), "tokenizer_config.json: not a JSON object (got array)");
}

}  // namespace
}  // namespace gpstream::tokenizer
