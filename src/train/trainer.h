// The training loop of `gpstream train`: one readable function — batch, forward, zero-grad, backward,
// clip, update, log — plus setup (tokenizer/codec, model from a Hugging Face directory or from sizes,
// datasets), dev loss, checkpoints (resume continues bit-identically), metrics (metrics.jsonl), the loss
// curve (loss.svg) and the export (model/ as a Hugging Face directory, adapter/ for LoRA runs). It never
// prints: progress goes to the callbacks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/train_config.h"

namespace gpstream::train {

struct StepReport {
  int64_t step = 0;         // optimizer steps done
  int64_t total_steps = 0;  // planned (estimated under a token budget)
  double loss = 0;          // token-mean training loss of this step
  double lr = 0;
  double grad_norm = 0;
  int64_t tokens_seen = 0;
  double tokens_per_s = 0;  // over this run's steps so far
  double elapsed_s = 0;
  double eta_s = 0;
  std::optional<double> dev_loss;  // when evaluated at this step
};

struct TrainRunOptions {
  std::string resume;  // a run folder (its newest checkpoint) or a checkpoint file; empty: fresh run
  std::function<void(const StepReport&)> on_step;
  std::function<void(const std::string&)> on_message;
  // Tests: stop after this many optimizer steps in total, as if killed (no export, no final checkpoint).
  int64_t stop_after_steps = 0;
  // Train no step: from the resumed checkpoint straight to the final checkpoint, the dev loss and the export
  // (e.g. of an averaged checkpoint, docs/training.md "Averaging checkpoints"). Needs `resume`.
  bool export_only = false;
  // Polled before each step (train/interrupt.h's interrupt_signal): nonzero (a signal number) stops the run
  // there with a checkpoint, as a periodic one, and no export; TrainResult::interrupted_by tells.
  std::function<int()> interrupt;
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
