// `gpstream train-speech CONFIG.json [--resume DIR] [--export-only] [-t THREADS]`: trains a streaming
// speech recognizer — the speech encoder + projector and the LLM (LoRA, full or frozen) together through the
// group-streaming layout (docs/speech.md, "Training"). Progress: a live line on a terminal, else one line
// every log_every steps; metrics in OUTPUT/metrics.jsonl, the loss curve in OUTPUT/loss.svg, the model in
// OUTPUT/model.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/progress_line.h"
#include "cli/training_interrupt.h"
#include "cli/training_run_args.h"
#include "speech/speech_trainer.h"
#include "train/interrupt.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

int run_train_speech(int argc, char** argv) {
  CLI::App app{"Train a streaming speech recognizer from a JSON config (see docs/speech.md)",
               "gpstream train-speech"};
  TrainingRunArgs args;
  args.add_to(app);
  if (auto rc = parse_args(app, argc, argv)) return *rc;

  auto text = read_text_file(args.config_path);
  if (!text) return fail("train-speech", text.error());
  auto cfg = speech::parse_speech_train_config(*text, args.config_path);
  if (!cfg) return fail("train-speech", cfg.error());
  args.override_config(*cfg);

  ProgressLine progress;
  speech::SpeechTrainOptions opt;
  args.fill(opt);
  opt.on_message = [&](const std::string& m) { progress.message(m); };
  const int64_t every = cfg->log_every;
  opt.on_step = [&](const speech::SpeechStepReport& r) {
    char dev[96] = "";
    if (r.ctc_loss && r.dev_loss)
      std::snprintf(dev, sizeof dev, "  ctc %.3f  dev %.4f", *r.ctc_loss, *r.dev_loss);
    else if (r.ctc_loss)
      std::snprintf(dev, sizeof dev, "  ctc %.3f", *r.ctc_loss);
    else if (r.dev_loss)
      std::snprintf(dev, sizeof dev, "  dev %.4f", *r.dev_loss);
    if (r.dev_ctc_wer) {
      const size_t used = std::strlen(dev);
      std::snprintf(dev + used, sizeof dev - used, "  dev ctc-WER %.1f%%", 100 * *r.dev_ctc_wer);
    }
    char buf[320];
    std::snprintf(
        buf, sizeof buf,
        "step %lld/%lld  %s %.4f%s  %.2f utt/s (%.1f s audio/s)  lr %.2e  |g| %.2f  %s elapsed  ETA %s",
        static_cast<long long>(r.step), static_cast<long long>(r.total_steps),
        r.ctc_only ? "ctc-only loss" : "loss", r.loss, dev, r.utterances_per_s, r.audio_s_per_s, r.lr,
        r.grad_norm, format_hms(r.elapsed_s).c_str(), format_hms(r.eta_s).c_str());
    progress.update(buf, r.dev_loss.has_value(),
                    r.step % every == 0 || r.dev_loss || r.step == r.total_steps);
  };
  train::InterruptHandler interrupts;  // SIGINT/SIGTERM: checkpoint after the current step, exit 130/143
  opt.interrupt = train::interrupt_signal;
  auto r = speech::run_speech_training(*cfg, opt);
  progress.close();
  if (!r) return fail("train-speech", r.error());
  if (r->interrupted_by != 0) return report_interrupted("train-speech", r->interrupted_by, cfg->output_dir);
  std::printf("trained %lld steps; encoder %lld parameters, LLM %lld trained; %lld utterances skipped%s\n",
              static_cast<long long>(r->first_step + static_cast<int64_t>(r->losses.size())),
              static_cast<long long>(r->n_encoder_params), static_cast<long long>(r->n_llm_trainable),
              static_cast<long long>(r->skipped),
              r->dev_loss ? (", dev loss " + std::to_string(*r->dev_loss)).c_str() : "");
  if (!r->model_dir.empty()) std::printf("model: %s\n", r->model_dir.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("train-speech", "train a streaming speech recognizer (encoder + LLM) from a JSON config",
                 "gpstream train-speech runs/speech/train.json --max-minutes 60",
                 gpstream::cli::run_train_speech);
