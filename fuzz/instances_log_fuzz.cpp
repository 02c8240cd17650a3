// Fuzz target: a SimulEval instances.log (JSON lines), then scoring it (BLEU and every latency metric,
// computation-aware included) as `gpstream score` does.
#include "eval/instance_log.h"
#include "eval/scores.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto log = gpstream::eval::parse_instances_log(gpstream::fuzz::as_text(data, size), "instances.log");
  if (!log.ok()) return 0;
  gpstream::eval::ScoreOptions options;
  options.latency.computation_aware = size % 2 == 0;
  (void)gpstream::eval::score_instances(log->records, options);
  return 0;
}
