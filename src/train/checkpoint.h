// Training checkpoints: the trained parameters, AdamW moments and step count, data position and counters
// — everything a resumed run needs to continue bit-identically (the RNG streams are pure functions of the
// seed and these counters). One file per checkpoint, written atomically (temporary file, fsync, rename):
//   "GPSCKPT1" | u64 header length | JSON header | f32 values[n] | f32 m[n] | f32 v[n] | u64 FNV-1a of all
//   before
// A checkpoint whose size, magic, header or checksum is wrong is refused with a message naming the file. The
// checksum only catches accidents (anyone can recompute it), so every header field is also checked before
// use: counters are integers in [0, kCheckpointMaxCounter], the elapsed time a finite non-negative number,
// n_params at least 1 and equal to what the file's length holds, the values and moments finite and the
// second moments non-negative; errors name the file and the field. What only the resuming run knows (the
// model's fingerprint and parameter count, the seed, the data) is checked by check_resume_checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/dataset.h"
#include "util/error.h"

namespace gpstream::train {

struct CheckpointState {
  int64_t step = 0;  // optimizer steps done
  int64_t tokens_seen = 0;
  DataPosition data;
  int64_t adam_t = 0;
  uint64_t seed = 0;
  double elapsed_s = 0.0;   // training time before this checkpoint (for ETA and logs)
  std::string fingerprint;  // what the parameters belong to (model shape, LoRA) — checked at resume
  std::vector<float> values, m, v;
};

// The largest step, token, epoch, batch and AdamW step count a checkpoint may hold: 2^53, the integers a JSON
// reader that keeps numbers as doubles still gets exactly (centuries of training at any speed).
inline constexpr int64_t kCheckpointMaxCounter = int64_t{1} << 53;

Status write_checkpoint(const std::string& path, const CheckpointState& s);
Result<CheckpointState> read_checkpoint(const std::string& path);

// What a run resuming from a checkpoint expects of it.
struct CheckpointExpectation {
  std::string fingerprint;  // the run's model (and setup)
  uint64_t seed = 0;
  size_t n_params = 0;  // the trainable parameters the checkpoint's values replace
  // Batches in the checkpoint's epoch of the run's data, the most its data position's batch can be (-1: not
  // known, not checked).
  int64_t batches_per_epoch = -1;
};
// Checks a checkpoint (as read_checkpoint returned it) against the run resuming from it: the same
// fingerprint, seed and parameter count, one AdamW step per training step (adam_t == step), and a data
// position within an epoch of the run's data. InvalidArgument naming the file and the field otherwise.
Status check_resume_checkpoint(const CheckpointState& s, const std::string& path,
                               const CheckpointExpectation& e);

// Checkpoint files in a folder (checkpoint-<step>.bin, at most 18 digits; other names are ignored), sorted by
// step.
std::vector<std::string> list_checkpoints(const std::string& dir);
// Deletes all but the newest `keep`, except those whose step is a multiple of keep_every (when > 0): those
// stay, for averaging (checkpoint_average.h) or for going back.
Status prune_checkpoints(const std::string& dir, int keep, int64_t keep_every = 0);

}  // namespace gpstream::train
