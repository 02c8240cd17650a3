// Fuzz target: encode arbitrary bytes (invalid UTF-8 included) with real tokenizers, decode the ids back,
// and decode arbitrary ids (in and out of the vocabulary) token by token. The first input byte picks the
// tokenizer: the shipped model's and the four fixtures of ../shared (when present).
#include <memory>
#include <vector>

#include "fuzz_input.h"
#include "tokenizer/tokenizer.h"

namespace {

using gpstream::tokenizer::Tokenizer;

const std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static const std::vector<std::unique_ptr<Tokenizer>> all = [] {
    std::vector<std::unique_ptr<Tokenizer>> v;
    const std::string src = GPSTREAM_SOURCE_DIR;
    for (const char* rel :
         {"/models/gpstream-en-fr/tokenizer.json", "/../shared/fixtures/tokenizers/llama2/tokenizer.json",
          "/../shared/fixtures/tokenizers/llama3/tokenizer.json",
          "/../shared/fixtures/tokenizers/qwen3/tokenizer.json",
          "/../shared/fixtures/tokenizers/gemma3/tokenizer.json"}) {
      auto t = Tokenizer::load(src + rel);
      if (t.ok()) v.push_back(std::make_unique<Tokenizer>(std::move(*t)));
    }
    if (v.empty()) std::abort();  // nothing to fuzz: the build is broken
    return v;
  }();
  return all;
}

}  // namespace

// The tokenizers load before the first input (151k-entry vocabularies take seconds under ASan), so their
// loading does not count against libFuzzer's per-input time limit.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Tokenizer& tok = *tokenizers()[data[0] % tokenizers().size()];
  const std::string_view text = gpstream::fuzz::as_text(data + 1, size - 1);
  const auto ids = tok.encode(text, (data[0] & 0x80) != 0);
  (void)tok.decode(ids, (data[0] & 0x40) != 0);
  // The same bytes read as token ids (any value, negative and huge included).
  std::vector<int32_t> raw;
  for (size_t i = 1; i + 4 <= size; i += 4) {
    int32_t v;
    __builtin_memcpy(&v, data + i, 4);
    raw.push_back(v);
  }
  (void)tok.decode(raw);
  return 0;
}
