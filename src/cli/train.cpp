// `gpstream train CONFIG.json [--resume DIR] [--max-minutes M] [--export-only]`: trains or fine-tunes a model
// (docs/training.md). On a terminal a live progress line (step, loss, tokens/s, learning rate, ETA);
// otherwise one plain line every log_every steps. Metrics go to OUTPUT/metrics.jsonl, the loss curve to
// OUTPUT/loss.svg, the model to OUTPUT/model (and OUTPUT/adapter for LoRA).
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/progress_line.h"
#include "cli/training_interrupt.h"
#include "cli/training_run_args.h"
#include "train/interrupt.h"
#include "train/trainer.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

int run_train(int argc, char** argv) {
  CLI::App app{"Train or fine-tune a model from a JSON config (see docs/training.md)", "gpstream train"};
  TrainingRunArgs args;
  args.add_to(app);
  if (auto rc = parse_args(app, argc, argv)) return *rc;

  auto text = read_text_file(args.config_path);
  if (!text) return fail("train", text.error());
  auto cfg = train::parse_train_config(*text, args.config_path);
  if (!cfg) return fail("train", cfg.error());
  args.override_config(*cfg);

  ProgressLine progress;
  train::TrainRunOptions opt;
  args.fill(opt);
  opt.on_message = [&](const std::string& m) { progress.message(m); };
  const int64_t every = cfg->log_every;
  opt.on_step = [&](const train::StepReport& r) {
    char dev[48] = "";
    if (r.dev_loss) std::snprintf(dev, sizeof dev, "  dev %.4f", *r.dev_loss);
    char buf[256];
    std::snprintf(
        buf, sizeof buf, "step %lld/%lld  loss %.4f%s  %.0f tok/s  lr %.2e  |g| %.2f  %s elapsed  ETA %s",
        static_cast<long long>(r.step), static_cast<long long>(r.total_steps), r.loss, dev, r.tokens_per_s,
        r.lr, r.grad_norm, format_hms(r.elapsed_s).c_str(), format_hms(r.eta_s).c_str());
    progress.update(buf, r.dev_loss.has_value(),
                    r.step % every == 0 || r.dev_loss || r.step == r.total_steps);
  };
  train::InterruptHandler interrupts;  // SIGINT/SIGTERM: checkpoint after the current step, exit 130/143
  opt.interrupt = train::interrupt_signal;
  auto r = train::run_training(*cfg, opt);
  progress.close();
  if (!r) return fail("train", r.error());
  if (r->interrupted_by != 0) return report_interrupted("train", r->interrupted_by, cfg->output_dir);
  std::printf("trained %lld steps, %lld tokens, %lld parameters (%lld trained)%s\n",
              static_cast<long long>(r->first_step + static_cast<int64_t>(r->losses.size())),
              static_cast<long long>(r->tokens_seen), static_cast<long long>(r->n_params),
              static_cast<long long>(r->n_trainable),
              r->dev_loss ? (", dev loss " + std::to_string(*r->dev_loss)).c_str() : "");
  if (!r->model_dir.empty()) std::printf("model: %s\n", r->model_dir.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("train", "train or fine-tune a model from a JSON config",
                 "gpstream train runs/en-fr/train.json", gpstream::cli::run_train);
