// Fuzz target: a long-form run file (`gpstream score --long-form`), then scoring it: resegmentation, BLEU,
// chrF, StreamLAAL and StreamLAAL_CA.
#include "eval/long_form.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto run = gpstream::eval::parse_long_form_run(gpstream::fuzz::as_text(data, size), "run.json");
  if (!run.ok()) return 0;
  (void)gpstream::eval::score_long_form(*run);
  return 0;
}
