// What the training-run harness (train/training_run.h) and the trainers do with a run folder and seeds: a
// 64-bit mixer for deriving seeds, a monotonic clock, atomic text files, finding the checkpoint a --resume
// argument means, keeping metrics.jsonl's lines up to a resumed step, and reading the loss curve back for
// loss.svg.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/loss_plot.h"
#include "util/error.h"

namespace gpstream::train {

// SplitMix64's finaliser: decorrelated seeds from (seed, counters).
uint64_t mix_seed(uint64_t x);
// Seconds on the steady clock.
double steady_seconds();
// Writes a text file atomically (temporary file + rename).
Status write_text_file(const std::string& path, const std::string& text);
// The checkpoint file `resume` names: a checkpoint file itself, or the newest one of a run folder (its
// checkpoints/ subfolder) or of a folder of checkpoints. NotFound when there is none.
Result<std::string> resolve_resume_checkpoint(const std::string& resume);
// The lines of a metrics.jsonl whose "step" is at most `step` (a torn last line from a kill ends it).
std::string metrics_lines_up_to(const std::string& path, int64_t step);
// The training losses and dev losses recorded in a metrics.jsonl.
void read_loss_curve(const std::string& path, std::vector<LossPoint>& train, std::vector<LossPoint>& dev);

}  // namespace gpstream::train
