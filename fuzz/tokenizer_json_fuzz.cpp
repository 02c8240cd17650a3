// Fuzz target: loading a tokenizer.json (model, normalizer, pre-tokenizer, decoder, added tokens), then
// encoding and decoding a fixed text with whatever loaded.
#include "fuzz_input.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tok = gpstream::tokenizer::Tokenizer::from_json_text(gpstream::fuzz::as_text(data, size));
  if (!tok.ok()) return 0;
  const auto ids = tok->encode("Hello, world! Ça va? 123 <s>", true);
  (void)tok->decode(ids);
  return 0;
}
