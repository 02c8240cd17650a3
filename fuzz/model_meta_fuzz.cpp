// Fuzz target: gpstream.json (template, languages, φ, k, paradigm) → ModelMeta.
#include "fuzz_input.h"
#include "stream/model_meta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpstream::stream::ModelMeta::parse(std::string(gpstream::fuzz::as_text(data, size)), "gpstream.json");
  return 0;
}
