// The training loop of `gpstream train-speech` (docs/speech.md): the streaming speech encoder + projector,
// and LoRA adapters on the LLM (or the whole LLM, or nothing of it), trained jointly through the LLM with the
// group-streaming layout where the source units are audio chunks (stream::make_layout over chunk row
// counts; wait-k counted in chunks, k drawn per utterance from [k_min, k_max]). One step: load a batch of
// utterances (WAV → 16 kHz → seeded noise → log-mel), run the encoder over each whole utterance, lay
// out [prompt, audio rows, header, transcript] per utterance, one masked forward and backward of the LLM
// over the packed batch, the LLM's gradient w.r.t. its input rows (TrainModel::input_grad) back through the
// encoder, then one AdamW update over encoder and LLM parameters together. An auxiliary CTC loss on the
// encoder output (characters, ctc_weight) speeds up learning the alignment; its head is trained and
// checkpointed, not exported. The training-run harness (train/training_run.h) runs the steps: resume
// (bit-identical), checkpoints by steps and minutes, max_minutes, interruption, metrics.jsonl, loss.svg; the
// export is a speech model directory (speech/speech_model.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "speech/speech_train_config.h"
#include "train/training_run.h"

namespace gpstream::speech {

// A step's progress (train/training_run.h; its loss: the token mean over the step's transcript tokens, in a
// CTC-only step the CTC loss) and what a speech step adds.
struct SpeechStepReport : train::StepProgress {
  bool ctc_only = false;           // a step of the first ctc_only_steps (encoder and CTC head alone)
  std::optional<double> ctc_loss;  // the auxiliary CTC loss, per character (when on)
  int64_t utterances_seen = 0;
  double utterances_per_s = 0;        // over this run's steps so far
  double audio_s_per_s = 0;           // seconds of training audio per second of training
  std::optional<double> dev_ctc_wer;  // corpus WER (fraction) of the CTC head's greedy transcripts on dev
};

// The run's resume, export-only, interruption and test hooks (train/training_run.h), and its progress.
struct SpeechTrainOptions : train::RunControl {
  std::function<void(const SpeechStepReport&)> on_step;
};

struct SpeechTrainResult {
  int64_t first_step = 0;
  std::vector<double> losses;  // each step of this run
  std::optional<double> dev_loss;
  std::optional<double> dev_ctc_wer;  // as in SpeechStepReport
  std::string model_dir;              // the exported speech model ("" when stopped early)
  int64_t n_encoder_params = 0, n_llm_trainable = 0;
  int64_t skipped = 0;     // utterances skipped (too long for max_seq, or too short for one encoder row)
  int interrupted_by = 0;  // the signal that stopped the run after its checkpoint (options.interrupt), or 0
};

Result<SpeechTrainResult> run_speech_training(const SpeechTrainConfig& config,
                                              const SpeechTrainOptions& options = {});

}  // namespace gpstream::speech
