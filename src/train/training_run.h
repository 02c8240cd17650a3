// The run harness of both training commands (`gpstream train`, train/trainer.h; `gpstream train-speech`,
// speech/speech_trainer.h), docs/training.md "Training runs". It owns what every run does around its steps:
// the run folder (train_config.json, metrics.jsonl, loss.svg, checkpoints/), resuming from a checkpoint
// (continuing bit-identically), checkpoints every N steps and every N minutes (pruned to the newest few),
// the training-time budget max_minutes (over every resume), the interruption poll (a signal finishes the
// current step, writes a checkpoint and reports it), the loss plot (rewritten at every checkpoint) and the
// order of the end: final checkpoint, final dev loss, loss plot, export. A trainer is a TrainingJob: its
// parameters and optimizer, its data position, one step, its metrics line, its dev loss and its export.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "train/dataset.h"
#include "train/optimizer.h"
#include "util/error.h"

namespace gpstream::train {

// What the caller of a training command decides about a run (both commands' options derive from it).
struct RunControl {
  std::string resume;  // a run folder (its newest checkpoint) or a checkpoint file; empty: fresh run
  std::function<void(const std::string&)> on_message;
  // Tests: stop after this many optimizer steps in total, as if killed (no export, no final checkpoint).
  int64_t stop_after_steps = 0;
  // Train no step: from the resumed checkpoint straight to the final checkpoint, the dev loss and the export
  // (e.g. of an averaged checkpoint, docs/training.md "Averaging checkpoints"). Needs `resume`.
  bool export_only = false;
  // Polled before each step (train/interrupt.h's interrupt_signal): nonzero (a signal number) stops the run
  // there with a checkpoint, as a periodic one, and no export; the result's interrupted_by tells.
  std::function<int()> interrupt;
  // Seconds from any origin, read for checkpoints by minutes, max_minutes and the logged times; empty: the
  // steady clock (tests pass a clock that advances by a fixed amount per reading).
  std::function<double()> clock;
};

// What the configuration decides about a run.
struct RunPlan {
  std::string output_dir;
  std::string config_json;  // copied to the run folder as train_config.json
  std::string plot_title;   // loss.svg's
  uint64_t seed = 0;
  int64_t total_steps = 0;
  int64_t max_seen = 0;    // stop once this many examples (tokens, utterances) are seen; 0: no limit
  double max_minutes = 0;  // training time over every resume; 0: no limit
  int64_t ckpt_every_steps = 0;
  double ckpt_every_minutes = 0;
  int keep_checkpoints = 3;
  int64_t keep_every_steps = 0;
};

// A plan from a training config's run keys, named alike in `gpstream train`'s and `train-speech`'s configs.
template <class Config>
RunPlan run_plan_from(const Config& config, int64_t total_steps, std::string plot_title) {
  RunPlan plan;
  plan.output_dir = config.output_dir;
  plan.config_json = config.raw_json;
  plan.plot_title = std::move(plot_title);
  plan.seed = config.seed;
  plan.total_steps = total_steps;
  plan.max_minutes = config.max_minutes;
  plan.ckpt_every_steps = config.ckpt_every_steps;
  plan.ckpt_every_minutes = config.ckpt_every_minutes;
  plan.keep_checkpoints = config.keep_checkpoints;
  plan.keep_every_steps = config.keep_every_steps;
  return plan;
}

// One optimizer step as the job reports it.
struct StepDone {
  double loss = 0;   // the step's training loss (not finite: the run stops, "training diverged")
  int64_t seen = 0;  // examples it consumed (tokens for text, utterances for speech)
};

// The run's clock at the end of a step.
struct StepTiming {
  int64_t step = 0, total_steps = 0;
  int64_t seen = 0;           // over the whole run, resumes included
  int64_t seen_this_run = 0;  // since this process started (or resumed) it
  double run_s = 0;           // seconds since this process started training
  double elapsed_s = 0;       // training seconds over every resume
  double eta_s = 0;           // to the last step or to max_minutes, whichever comes first
  // `amount` (examples, seconds of audio) per second of this process's training.
  double per_s(double amount) const { return run_s > 0 ? amount / run_s : 0; }
};

// What every step's progress report carries (train/trainer.h's StepReport and speech/speech_trainer.h's
// SpeechStepReport add what their jobs count).
struct StepProgress {
  int64_t step = 0;         // optimizer steps done
  int64_t total_steps = 0;  // planned (estimated under a budget of examples)
  double loss = 0;          // the step's training loss
  double lr = 0;
  double grad_norm = 0;
  double elapsed_s = 0;
  double eta_s = 0;
  std::optional<double> dev_loss;  // when evaluated at this step
};

// Fills `p` from the job's step, its learning rate and gradient norm, and the run's clock (dev_loss is left).
void fill_step_progress(StepProgress& p, const StepDone& done, const StepTiming& timing, double lr,
                        double grad_norm);

// A step's metrics.jsonl line: step, `phase` (when not empty), loss, lr, grad_norm, the job's `fields`,
// elapsed_s, dev_loss (when evaluated) and the job's `dev_fields`, in that order (the fields: JSON objects).
std::string step_metrics_line(const StepProgress& p, std::string_view phase,
                              const nlohmann::ordered_json& fields, const nlohmann::ordered_json& dev_fields);

// The totals an export records.
struct RunTotals {
  int64_t steps = 0, seen = 0;
  double elapsed_s = 0;
  std::optional<double> dev_loss;
};

// A trainer's side of a run.
class TrainingJob {
 public:
  virtual ~TrainingJob() = default;
  // What the checkpoint's parameters belong to (model shape, adapters), checked at resume.
  virtual std::string fingerprint() = 0;
  // The trained values, one flat buffer, and their optimizer: checkpointed and restored as they are.
  virtual std::vector<float>& parameters() = 0;
  virtual AdamW& optimizer() = 0;
  // Called after a resume replaced parameters() (a job whose models hold copies updates them).
  virtual void parameters_restored() {}
  virtual DataPosition data_position() = 0;
  // Moves the data to a resumed checkpoint's position; returns the number of batches of that position's
  // epoch (the most its batch index may be).
  virtual int64_t seek_data(DataPosition position) = 0;
  // One optimizer step, `steps_done` steps into the run.
  virtual Result<StepDone> train_step(int64_t steps_done) = 0;
  // The step's metrics.jsonl line (with the dev scores when they are due) after telling its caller.
  virtual Result<std::string> step_metrics(const StepDone& done, const StepTiming& timing) = 0;
  // After the final checkpoint of a run that was not interrupted: the final dev loss (none without dev data).
  virtual Result<std::optional<double>> final_dev_loss() = 0;
  // Writes the trained model into the run folder.
  virtual Status export_model(const RunTotals& totals) = 0;
};

struct RunOutcome {
  int64_t first_step = 0;      // 0, or the resumed checkpoint's step
  RunTotals totals;            // at the end (dev_loss: the final one)
  std::vector<double> losses;  // of each step this run took
  int interrupted_by = 0;      // the signal that stopped the run after its checkpoint, or 0
  bool stopped = false;        // stopped by stop_after_steps (as if killed)
  bool exported = false;
};

// Refuses options that cannot run (export_only without resume), before any setup.
Status check_run_control(const RunControl& control);

// Runs `job` as `plan` and `control` say (resume, steps, checkpoints, end, export).
Result<RunOutcome> run_training_job(TrainingJob& job, const RunPlan& plan, const RunControl& control);

}  // namespace gpstream::train
