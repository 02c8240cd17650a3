// The run harness (training_run.h).
#include "train/training_run.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "train/checkpoint.h"
#include "train/loss_plot.h"
#include "train/run_folder.h"

namespace gpstream::train {
namespace {

class RunFolder {
 public:
  RunFolder(const std::string& dir, const RunPlan& plan)
      : plan_(plan),
        checkpoints_(dir + "/checkpoints"),
        metrics_(dir + "/metrics.jsonl"),
        plot_(dir + "/loss.svg") {}

  const std::string& metrics_path() const { return metrics_; }

  Status create() const {
    std::error_code ec;
    std::filesystem::create_directories(checkpoints_, ec);
    if (ec) return io_error("cannot create " + checkpoints_ + ": " + ec.message());
    return {};
  }

  // Writes checkpoint-<step>.bin, prunes the older ones and redraws the loss plot so far.
  Status save(const CheckpointState& state, const RunControl& control) const {
    char name[64];
    std::snprintf(name, sizeof name, "/checkpoint-%08lld.bin", static_cast<long long>(state.step));
    GPS_TRY(write_checkpoint(checkpoints_ + name, state));
    GPS_TRY(prune_checkpoints(checkpoints_, plan_.keep_checkpoints, plan_.keep_every_steps));
    if (control.on_message) control.on_message("checkpoint " + checkpoints_ + name);
    return write_loss_plot(metrics_, plot_, plan_.plot_title);
  }

  // The loss plot of the finished run: metrics.jsonl's losses and the final dev loss.
  Status write_final_plot(int64_t step, std::optional<double> dev_loss) const {
    std::vector<LossPoint> train, dev;
    read_loss_curve(metrics_, train, dev);
    if (dev_loss) dev.push_back({static_cast<double>(step), *dev_loss});
    return write_text_file(plot_, loss_curve_svg(train, dev, plan_.plot_title));
  }

 private:
  const RunPlan& plan_;
  std::string checkpoints_, metrics_, plot_;
};

}  // namespace

Status check_run_control(const RunControl& control) {
  if (control.export_only && control.resume.empty())
    return invalid_argument("export-only needs a checkpoint to resume from (--resume)");
  return {};
}

void fill_step_progress(StepProgress& p, const StepDone& done, const StepTiming& timing, double lr,
                        double grad_norm) {
  p.step = timing.step;
  p.total_steps = timing.total_steps;
  p.loss = done.loss;
  p.lr = lr;
  p.grad_norm = grad_norm;
  p.elapsed_s = timing.elapsed_s;
  p.eta_s = timing.eta_s;
}

std::string step_metrics_line(const StepProgress& p, std::string_view phase,
                              const nlohmann::ordered_json& fields,
                              const nlohmann::ordered_json& dev_fields) {
  nlohmann::ordered_json j;
  j["step"] = p.step;
  if (!phase.empty()) j["phase"] = std::string(phase);
  j["loss"] = p.loss;
  j["lr"] = p.lr;
  j["grad_norm"] = p.grad_norm;
  for (const auto& field : fields.items()) j[field.key()] = field.value();
  j["elapsed_s"] = p.elapsed_s;
  if (p.dev_loss) j["dev_loss"] = *p.dev_loss;
  for (const auto& field : dev_fields.items()) j[field.key()] = field.value();
  return j.dump();
}

Result<RunOutcome> run_training_job(TrainingJob& job, const RunPlan& plan, const RunControl& control) {
  auto message = [&](const std::string& m) {
    if (control.on_message) control.on_message(m);
  };
  auto now = [&] { return control.clock ? control.clock() : steady_seconds(); };
  GPS_TRY(check_run_control(control));
  const RunFolder folder(plan.output_dir, plan);
  GPS_TRY(folder.create());
  AdamW& adam = job.optimizer();
  int64_t step = 0, seen = 0;
  double elapsed_before = 0;
  std::string kept_metrics;
  if (!control.resume.empty()) {
    GPS_ASSIGN(const std::string path, resolve_resume_checkpoint(control.resume));
    GPS_ASSIGN(CheckpointState s, read_checkpoint(path));
    CheckpointExpectation expect;
    expect.batches_per_epoch = job.seek_data(s.data);
    expect.fingerprint = job.fingerprint();
    expect.seed = plan.seed;
    expect.n_params = job.parameters().size();
    GPS_TRY(check_resume_checkpoint(s, path, expect));
    job.parameters() = std::move(s.values);
    adam.m = std::move(s.m);
    adam.v = std::move(s.v);
    adam.t = s.adam_t;
    step = s.step;
    seen = s.tokens_seen;
    elapsed_before = s.elapsed_s;
    job.parameters_restored();
    message("resumed from " + path + " at step " + std::to_string(step));
    kept_metrics = metrics_lines_up_to(folder.metrics_path(), step);  // the metric lines up to the checkpoint
  }
  GPS_TRY(write_text_file(plan.output_dir + "/train_config.json", plan.config_json));
  GPS_TRY(write_text_file(folder.metrics_path(), kept_metrics));
  std::ofstream metrics(folder.metrics_path(), std::ios::app);

  const std::string fingerprint = job.fingerprint();
  auto save = [&](double elapsed) -> Status {
    CheckpointState s;
    s.step = step;
    s.tokens_seen = seen;
    s.data = job.data_position();
    s.adam_t = adam.t;
    s.seed = plan.seed;
    s.elapsed_s = elapsed;
    s.fingerprint = fingerprint;
    s.values = job.parameters();
    s.m = adam.m;
    s.v = adam.v;
    return folder.save(s, control);
  };

  RunOutcome outcome;
  outcome.first_step = step;
  const double t_start = now();
  double last_checkpoint = t_start;
  const int64_t start_step = step, start_seen = seen;
  // max_minutes bounds the training time over every resume: a run resumed past it trains no more steps and
  // goes straight to the final checkpoint and the export.
  const double budget_s = plan.max_minutes > 0 ? 60.0 * plan.max_minutes : HUGE_VAL;
  bool out_of_time = elapsed_before >= budget_s;
  while (!control.export_only && !out_of_time && step < plan.total_steps &&
         (plan.max_seen == 0 || seen < plan.max_seen)) {
    if (control.interrupt && (outcome.interrupted_by = control.interrupt()) != 0) break;
    GPS_ASSIGN(const StepDone done, job.train_step(step));
    ++step;
    seen += done.seen;
    if (!std::isfinite(done.loss))
      return Error(ErrorCode::Internal,
                   "training diverged: loss is not finite at step " + std::to_string(step));
    outcome.losses.push_back(done.loss);
    const double t = now();
    StepTiming timing;
    timing.step = step;
    timing.total_steps = plan.total_steps;
    timing.seen = seen;
    timing.seen_this_run = seen - start_seen;
    timing.run_s = t - t_start;
    timing.elapsed_s = elapsed_before + timing.run_s;
    timing.eta_s = std::min(
        timing.run_s / static_cast<double>(step - start_step) * static_cast<double>(plan.total_steps - step),
        std::max(0.0, budget_s - timing.elapsed_s));
    out_of_time = timing.elapsed_s >= budget_s;
    GPS_ASSIGN(const std::string line, job.step_metrics(done, timing));
    metrics << line << "\n" << std::flush;
    if (control.stop_after_steps > 0 && step >= control.stop_after_steps) {
      outcome.stopped = true;
      outcome.totals = {step, seen, timing.elapsed_s, std::nullopt};
      return outcome;
    }
    const bool by_steps = plan.ckpt_every_steps > 0 && step % plan.ckpt_every_steps == 0;
    const bool by_time = plan.ckpt_every_minutes > 0 && t - last_checkpoint >= 60.0 * plan.ckpt_every_minutes;
    if ((by_steps || by_time) && step < plan.total_steps && !out_of_time) {
      GPS_TRY(save(timing.elapsed_s));
      last_checkpoint = now();
    }
  }
  if (out_of_time) message("stopping at step " + std::to_string(step) + ": max_minutes reached");
  outcome.totals = {step, seen, elapsed_before + now() - t_start, std::nullopt};
  GPS_TRY(save(outcome.totals.elapsed_s));
  metrics.close();
  if (outcome.interrupted_by != 0) return outcome;

  GPS_ASSIGN(outcome.totals.dev_loss, job.final_dev_loss());
  GPS_TRY(folder.write_final_plot(step, outcome.totals.dev_loss));
  GPS_TRY(job.export_model(outcome.totals));
  outcome.exported = true;
  return outcome;
}

}  // namespace gpstream::train
