// Checkpoint averaging: the mean of the parameters of several checkpoints of one run (the last few
// before the end of a run, where the learning rate is small, average out the noise of the last steps).
// The result is a checkpoint like any other — export it by resuming from it (docs/training.md,
// "Averaging checkpoints").
#pragma once

#include <string>
#include <vector>

#include "train/checkpoint.h"
#include "util/error.h"

namespace gpstream::train {

// Reads the checkpoints one at a time and returns the newest one (largest step; the first of equal
// steps) with `values` replaced by the element-wise mean of all the files' values, summed in double in
// the order given. The optimizer moments, step and data position stay the newest checkpoint's, so a run
// resumed from the result continues from there. Errors: no paths, a file that does not read, or files
// whose fingerprint or parameter count differ from the first's (not the same run's parameters).
Result<CheckpointState> average_checkpoints(const std::vector<std::string>& paths);

}  // namespace gpstream::train
