// `gpstream train`: setup (tokenizer/codec, model from a Hugging Face directory or from sizes, datasets), one
// training step — batch, forward, zero-grad, backward, clip, update — its metrics line and dev loss, and the
// export (model/ as a Hugging Face directory, adapter/ for LoRA runs), run by the training-run harness
// (train/training_run.h: resume, checkpoints, max_minutes, interruption, metrics.jsonl, loss.svg). It never
// prints: progress goes to the callbacks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/train_config.h"
#include "train/training_run.h"

namespace gpstream::train {

// A step's progress (train/training_run.h; its loss: the token mean, total_steps estimated under a token
// budget) and the tokens seen.
struct StepReport : StepProgress {
  int64_t tokens_seen = 0;
  double tokens_per_s = 0;  // over this run's steps so far
};

// The run's resume, export-only, interruption and test hooks (train/training_run.h), and its progress.
struct TrainRunOptions : RunControl {
  std::function<void(const StepReport&)> on_step;
};

struct TrainResult {
  int64_t first_step = 0;          // step the run started from (0, or the checkpoint's)
  std::vector<double> losses;      // training loss of each step this run took
  std::optional<double> dev_loss;  // final dev loss
  std::string model_dir;           // exported Hugging Face directory ("" when stopped early)
  int64_t n_params = 0, n_trainable = 0, tokens_seen = 0;
  int interrupted_by = 0;  // the signal that stopped the run after its checkpoint (options.interrupt), or 0
};

Result<TrainResult> run_training(const TrainConfig& config, const TrainRunOptions& options = {});

}  // namespace gpstream::train
