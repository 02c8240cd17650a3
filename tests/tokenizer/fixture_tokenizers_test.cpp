// The four fixture tokenizers, one test each: oracle parity (ids, special tokens, decoded text), the
// incremental detokenizer, word starts, and the per-segment encoder with the tokenizer's template.
#include <gtest/gtest.h>

#include "fixture_checks.h"
#include "test_data.h"

namespace gpstream::tokenizer {
namespace {

void check_all(const std::string& name, const std::string& tmpl) {
  {
    SCOPED_TRACE("parity");
    check_parity(name);
  }
  {
    SCOPED_TRACE("detokenizer");
    check_detokenizer(name);
  }
  {
    SCOPED_TRACE("word starts");
    check_word_starts(name);
  }
  {
    SCOPED_TRACE("segments");
    check_segments(name, tmpl);
  }
}

TEST(FixtureTokenizers, Qwen3) {
  GPS_SKIP_WITHOUT_FIXTURE("qwen3");
  check_all("qwen3", "qwen");
}
TEST(FixtureTokenizers, Llama3) {
  GPS_SKIP_WITHOUT_FIXTURE("llama3");
  check_all("llama3", "llama3");
}
TEST(FixtureTokenizers, Llama2) {
  GPS_SKIP_WITHOUT_FIXTURE("llama2");
  check_all("llama2", "gpstream");
}
TEST(FixtureTokenizers, Gemma3) {
  GPS_SKIP_WITHOUT_FIXTURE("gemma3");
  check_all("gemma3", "gemma2");
}

}  // namespace
}  // namespace gpstream::tokenizer
