// Tokenizers in GGUF: a tokenizer.json written as llama.cpp's tokenizer.ggml.* keys and rebuilt from those
// keys alone (no tokenizer.huggingface.json) encodes the edge cases exactly as the original does — the ids
// committed in tests/tokenizer/data/{qwen3,llama3}.edge.jsonl, made with Hugging Face tokenizers; with
// tokenizer.huggingface.json present the stored file is used as is; llama.cpp's own Qwen2 vocabulary
// (ggml-vocab-qwen2.gguf) encodes its test strings to llama.cpp's ids (skipped without /tmp/llama-anchor);
// SentencePiece and unknown pre-tokenizers are refused by name.
#include "tokenizer/gguf_vocab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_data.h"
#include "util/mapped_file.h"

namespace gpstream::tokenizer {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The metadata of `name`'s tokenizer as gpstream writes it, minus tokenizer.huggingface.json when asked.
io::GgufMetadata gguf_keys(const std::string& name, int n_vocab, bool keep_hf_json) {
  auto text = read_text_file(testing::fixture_tokenizer(name) + "/tokenizer.json");
  EXPECT_TRUE(text.ok());
  io::GgufMetadata m;
  Status s = add_tokenizer_to_gguf(*text, "", n_vocab, std::nullopt, std::nullopt, m);
  EXPECT_TRUE(s.ok()) << s.error().message();
  if (keep_hf_json) return m;
  io::GgufMetadata out;
  for (const auto& [k, v] : m.items())
    if (k != "tokenizer.huggingface.json") out.set(k, v);
  return out;
}

// An added token the model has no row for, or of the wrong type, is refused naming the file and the field.
TEST(GgufVocabKeys, BadAddedTokensAreNamed) {
  auto message = [](const std::string& added) {
    const std::string text =
        R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        "added_tokens": [)" +
        added + "]}";
    io::GgufMetadata m;
    Status s = add_tokenizer_to_gguf(text, "", 4, std::nullopt, std::nullopt, m);
    return s.ok() ? std::string("<accepted>") : s.error().message();
  };
  EXPECT_EQ(message(R"({"id": 3, "content": "<s>", "special": true})"), "<accepted>");
  // 4 rows: ids 0-3.
  EXPECT_EQ(message(R"({"id": 7, "content": "<s>"})"),
            "tokenizer.json: field 'added_tokens[0].id' must be an integer in [0, 3], got 7");
  EXPECT_EQ(message(R"({"id": 3, "content": 5})"),
            "tokenizer.json: field 'added_tokens[0].content' must be a string, got number");
}

class GgufVocab : public ::testing::TestWithParam<std::tuple<std::string, std::string, int>> {};

TEST_P(GgufVocab, RebuiltFromGgmlKeysEncodesLikeTheOriginal) {
  const auto [name, pre, n_vocab] = GetParam();
  GPS_SKIP_WITHOUT_FIXTURE(name);
  for (bool keep : {false, true}) {
    const io::GgufMetadata m = gguf_keys(name, n_vocab, keep);
    EXPECT_EQ(*m.get_string("tokenizer.ggml.pre"), pre);
    EXPECT_EQ(m.find("tokenizer.ggml.tokens")->strs.size(), static_cast<size_t>(n_vocab));
    auto tok = tokenizer_from_gguf(m, name);
    ASSERT_TRUE(tok.ok()) << tok.error().message();
    const auto inputs = lines_of(testing::data_dir() + "/edge_cases.jsonl");
    const auto expected = lines_of(testing::data_dir() + "/" + name + ".edge.jsonl");
    ASSERT_EQ(inputs.size(), expected.size());
    ASSERT_GT(inputs.size(), 50u);
    for (size_t i = 0; i < inputs.size(); ++i) {
      // Lines are JSON strings, or {"hex": "..."} for byte strings that are not valid UTF-8.
      const auto line = nlohmann::json::parse(inputs[i]);
      std::string text;
      if (line.is_string()) {
        text = line.get<std::string>();
      } else {
        const std::string hex = line["hex"].get<std::string>();
        for (size_t k = 0; k + 1 < hex.size(); k += 2)
          text.push_back(static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16)));
      }
      const auto want = nlohmann::json::parse(expected[i])["ids"].get<std::vector<int32_t>>();
      EXPECT_EQ(tok->encode(text), want) << name << (keep ? " (tokenizer.huggingface.json)" : " (ggml keys)")
                                         << " input " << i << ": " << inputs[i];
    }
  }
}

// n_vocab past the tokenizer: the padding rows become [PAD<id>] tokens of type unused.
INSTANTIATE_TEST_SUITE_P(Fixtures, GgufVocab,
                         ::testing::Values(std::make_tuple("qwen3", "qwen2", 151936),
                                           std::make_tuple("llama3", "llama-bpe", 128256)));

TEST(GgufVocabErrors, RefusedByName) {
  io::GgufMetadata m;
  m.set("tokenizer.ggml.model", io::GgufValue::string("llama"));
  auto r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("SentencePiece"), std::string::npos);
  m.set("tokenizer.ggml.model", io::GgufValue::string("gpt2"));
  m.set("tokenizer.ggml.tokens", io::GgufValue::string_array({"a", "b", "ab"}));
  m.set("tokenizer.ggml.merges", io::GgufValue::string_array({"a b"}));
  m.set("tokenizer.ggml.pre", io::GgufValue::string("falcon"));
  r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("'falcon'"), std::string::npos);
  m.set("tokenizer.ggml.pre", io::GgufValue::string("gpt-2"));
  m.set("tokenizer.ggml.token_type", io::GgufValue::int_array(io::GgufType::I32, {1, 1}));  // wrong length
  r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("token_type"), std::string::npos);
  m.set("tokenizer.ggml.tokens", io::GgufValue::string_array({"a", "a"}));
  m.set("tokenizer.ggml.token_type", io::GgufValue::int_array(io::GgufType::I32, {1, 1}));
  r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("twice"), std::string::npos);
  // Found by fuzzing (an uncaught JSON exception): tokens or merges that are not UTF-8 are a format error.
  m.set("tokenizer.ggml.tokens", io::GgufValue::string_array({"a", "\x9f", "ab"}));
  m.set("tokenizer.ggml.token_type", io::GgufValue::int_array(io::GgufType::I32, {1, 1, 1}));
  r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("token 1 is not valid UTF-8"), std::string::npos) << r.error().message();
  m.set("tokenizer.ggml.tokens", io::GgufValue::string_array({"a", "b", "ab"}));
  m.set("tokenizer.ggml.merges", io::GgufValue::string_array({"a \xc3"}));
  r = tokenizer_json_from_gguf(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("merge 0 is not valid UTF-8"), std::string::npos) << r.error().message();
  io::GgufMetadata none;
  EXPECT_EQ(tokenizer_json_from_gguf(none).error().code(), ErrorCode::NotFound);
}

// A GGUF file's embedded tokenizer.json goes through the same bounded parsers: a decoder nested 10,000 deep
// overflowed the stack of every command loading the model.
TEST(GgufVocabErrors, DeeplyNestedEmbeddedTokenizerJsonIsRefused) {
  std::string text = R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"decoder":)";
  for (int i = 0; i < 10000; ++i) text += R"({"type":"Sequence","decoders":[)";
  text += R"({"type":"Fuse"})";
  for (int i = 0; i < 10000; ++i) text += "]}";
  text += "}";
  io::GgufMetadata m;
  m.set("tokenizer.huggingface.json", io::GgufValue::string(text));
  auto t = tokenizer_from_gguf(m, "x.gguf");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message().rfind("x.gguf (tokenizer): decoder: ", 0), 0u) << t.error().message();
}

// llama.cpp's Qwen2 vocabulary file and its tokenizer test (inputs separated by __ggml_vocab_test__ lines,
// one line of ids per input).
TEST(GgufVocabLlamaCpp, Qwen2VocabularyMatchesLlamaCppIds) {
  const std::string base = "/tmp/llama-anchor/src/models/ggml-vocab-qwen2.gguf";
  if (!std::filesystem::exists(base)) GTEST_SKIP() << "no " << base << " (llama-anchor.sh setup)";
  auto tok = load_gguf_tokenizer(base);
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  auto inp = read_text_file(base + ".inp");
  ASSERT_TRUE(inp.ok());
  std::vector<std::string> inputs;
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t pos = 0;;) {
    const size_t next = inp->find(sep, pos);
    if (next == std::string::npos) break;
    inputs.push_back(inp->substr(pos, next - pos));
    pos = next + sep.size();
  }
  const auto outs = lines_of(base + ".out");
  ASSERT_GE(outs.size(), inputs.size());
  ASSERT_GT(inputs.size(), 20u);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int32_t> want;
    std::istringstream ss(outs[i]);
    for (int32_t id; ss >> id;) want.push_back(id);
    EXPECT_EQ(tok->encode(inputs[i]), want) << "input " << i << ": " << inputs[i];
  }
}

}  // namespace
}  // namespace gpstream::tokenizer
