// Training checkpoints: the trained parameters, AdamW moments and step count, data position and counters
// — everything a resumed run needs to continue bit-identically (the RNG streams are pure functions of the
// seed and these counters). One file per checkpoint, written atomically (temporary file, fsync, rename):
//   "GPSCKPT1" | u64 header length | JSON header | f32 values[n] | f32 m[n] | f32 v[n] | u64 FNV-1a of all
//   before
// A checkpoint whose size, magic, header or checksum is wrong is refused with a message naming the file.
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

Status write_checkpoint(const std::string& path, const CheckpointState& s);
Result<CheckpointState> read_checkpoint(const std::string& path);

// Checkpoint files in a folder (checkpoint-<step>.bin, at most 18 digits; other names are ignored), sorted by
// step.
std::vector<std::string> list_checkpoints(const std::string& dir);
// Deletes all but the newest `keep`, except those whose step is a multiple of keep_every (when > 0): those
// stay, for averaging (checkpoint_average.h) or for going back.
Status prune_checkpoints(const std::string& dir, int keep, int64_t keep_every = 0);

}  // namespace gpstream::train
