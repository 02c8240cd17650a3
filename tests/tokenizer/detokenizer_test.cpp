// Incremental detokenizer: ids fed one at a time release only complete UTF-8, and everything released
// equals the oracle's decoded text (Hugging Face tokenizers, fixtures of scripts/make-tokenizer-fixtures).
#include "tokenizer/detokenizer.h"

#include <nlohmann/json.hpp>

#include "fixture_checks.h"
#include "test_data.h"
#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {
namespace {

using namespace testing;

std::string stream_decode(const Tokenizer& tok, const std::vector<int32_t>& ids, size_t* held_max) {
  IncrementalDetokenizer d(tok);
  std::string out;
  for (int32_t id : ids) {
    auto step = d.push(id);
    EXPECT_TRUE(is_valid_utf8(step.text)) << "partial UTF-8 released";
    *held_max = std::max(*held_max, d.pending_bytes());
    out += step.text;
  }
  return out + d.flush();
}

}  // namespace

void check_detokenizer(const std::string& name) {
  const Tokenizer& tok = load_fixture(name);
  size_t held_max = 0;
  auto edge_out = split_lines(read_text(data_dir() + "/" + name + ".edge.jsonl"));
  for (size_t i = 0; i < edge_out.size(); ++i) {
    auto o = nlohmann::json::parse(edge_out[i]);
    for (const char* k : {"ids", "special"}) {
      auto ids = o[k].get<std::vector<int32_t>>();
      std::string want = o[std::string(k) == "ids" ? "decoded" : "special_decoded"].get<std::string>();
      EXPECT_EQ(stream_decode(tok, ids, &held_max), want) << name << " edge case " << i << " " << k;
    }
  }
  auto lines = dev_lines();
  auto ids = split_lines(read_text(data_dir() + "/" + name + ".dev.ids"));
  for (size_t i = 0; i < lines.size(); i += 7) {
    EXPECT_EQ(stream_decode(tok, parse_ids(ids[i]), &held_max), lines[i]) << name << " dev line " << i;
  }
  // The edge cases hold emoji and CJK split across byte tokens: something must have been held back.
  EXPECT_GT(held_max, 0u) << name;
}

// Words: in text with single spaces, byte-level BPE gives one word-start token per space (the space
// joins the next word, or stands alone before digits); SentencePiece-style llama-2 marks every word
// ('▁' prepended to the first one too); gemma-3 (no prefix) every word but the first.
void check_word_starts(const std::string& name) {
  auto lines = dev_lines();
  const Tokenizer& tok = load_fixture(name);
  size_t checked = 0;
  for (size_t i = 0; i < lines.size(); i += 5) {
    const std::string& s = lines[i];
    if (s.find("  ") != std::string::npos || s.empty() || s.front() == ' ' || s.back() == ' ') continue;
    size_t spaces = std::count(s.begin(), s.end(), ' ');
    size_t starts = 0;
    for (int32_t id : tok.encode(s)) starts += tok.starts_word(id);
    size_t want = name == "llama2" ? spaces + 1 : spaces;
    EXPECT_EQ(starts, want) << name << ": \"" << s << "\"";
    ++checked;
  }
  EXPECT_GT(checked, 100u);
  auto first = [&](const std::string& s) { return tok.encode(s).at(0); };
  if (tok.style() == TokenizerStyle::ByteLevel) {
    EXPECT_TRUE(tok.starts_word(first(" devons")));
    EXPECT_FALSE(tok.starts_word(first("devons")));
    EXPECT_TRUE(tok.starts_word(first("\nx")));
  }
  if (name == "qwen3") {
    EXPECT_FALSE(tok.starts_word(*tok.token_to_id("<|im_end|>")));
  }
  if (name == "llama2") {
    EXPECT_TRUE(
        tok.starts_word(*tok.token_to_id("\xE2\x96\x81"
                                         "de")));  // ▁de
    EXPECT_FALSE(tok.starts_word(*tok.token_to_id("de")));
    EXPECT_TRUE(tok.starts_word(*tok.token_to_id("<0x20>")));
    EXPECT_FALSE(tok.starts_word(*tok.token_to_id("<0xE6>")));
    EXPECT_FALSE(tok.starts_word(*tok.bos_id()));
  }
}

namespace {

// Bytes of one character spread over three byte-fallback tokens are released together.
TEST(Detokenizer, HoldsBackPartialCharacters) {
  GPS_SKIP_WITHOUT_FIXTURE("llama2");
  const Tokenizer& llama2 = load_fixture("llama2");
  IncrementalDetokenizer d(llama2);
  std::vector<int32_t> ids = {*llama2.token_to_id("\xE2\x96\x81"
                                                  "a"),
                              *llama2.token_to_id("<0xE2>"), *llama2.token_to_id("<0x82>"),
                              *llama2.token_to_id("<0xAC>")};
  EXPECT_EQ(d.push(ids[0]).text, "a");  // leading space stripped at the start, as the decoder does
  EXPECT_EQ(d.push(ids[1]).text, "");
  EXPECT_EQ(d.push(ids[2]).text, "");
  EXPECT_EQ(d.push(ids[3]).text, "\xE2\x82\xAC");  // €
  EXPECT_EQ(d.push(ids[1]).text, "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // an unfinished character at the end becomes U+FFFD
}

}  // namespace
}  // namespace gpstream::tokenizer
