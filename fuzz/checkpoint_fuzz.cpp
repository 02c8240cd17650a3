// Fuzz target: a training checkpoint (train/checkpoint.h) as `--resume` and `average-checkpoints` read it.
// Its FNV-1a checksum catches accidents, not intent, so each input is read twice: as it is, and with its last
// 8 bytes replaced by the checksum of the rest, as anyone altering a checkpoint would write it (that is how
// mutated headers get past the checksum to the field checks). A file that reads must keep read_checkpoint's
// promises (counters in range, one value per parameter and per moment, finite values, second moments >= 0),
// pass the resume check against a run that matches it (or fail it only on adam_t != step), and average with
// itself to itself.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "train/checkpoint.h"
#include "train/checkpoint_average.h"

namespace {

namespace train = gpstream::train;

void check_file(const uint8_t* data, size_t size) {
  const std::string path = gpstream::fuzz::as_file(data, size, ".ckpt");
  auto r = train::read_checkpoint(path);
  if (!r.ok()) return;
  const train::CheckpointState& s = *r;
  const size_t n = s.values.size();
  if (n == 0 || s.m.size() != n || s.v.size() != n) std::abort();
  for (int64_t c : {s.step, s.tokens_seen, s.data.epoch, s.data.batch, s.adam_t})
    if (c < 0 || c > train::kCheckpointMaxCounter) std::abort();
  if (!std::isfinite(s.elapsed_s) || s.elapsed_s < 0 || s.fingerprint.empty()) std::abort();
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(s.values[i]) || !std::isfinite(s.m[i]) || !std::isfinite(s.v[i]) || s.v[i] < 0)
      std::abort();
  train::CheckpointExpectation run;
  run.fingerprint = s.fingerprint;
  run.seed = s.seed;
  run.n_params = n;
  run.batches_per_epoch = s.data.batch;
  if (train::check_resume_checkpoint(s, path, run).ok() != (s.adam_t == s.step)) std::abort();
  auto avg = train::average_checkpoints({path, path});
  if (!avg.ok() || avg->values != s.values || avg->step != s.step) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_file(data, size);
  if (size < 8) return 0;
  std::vector<uint8_t> resealed(data, data + size);
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 of everything before the checksum
  for (size_t i = 0; i + 8 < size; ++i) h = (h ^ resealed[i]) * 0x100000001b3ull;
  std::memcpy(resealed.data() + size - 8, &h, 8);
  check_file(resealed.data(), size);
  return 0;
}
