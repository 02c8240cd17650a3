// Fuzz target: a training/test TSV (source<TAB>target lines) as the trainer and the evaluator read it.
#include "eval/text_lines.h"
#include "fuzz_input.h"
#include "train/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpstream::train::read_pairs_tsv(gpstream::fuzz::as_file(data, size, ".tsv"));
  (void)gpstream::eval::split_text_lines(gpstream::fuzz::as_text(data, size), "input", true);
  return 0;
}
