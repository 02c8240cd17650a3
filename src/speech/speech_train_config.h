// The `gpstream train-speech` configuration (a JSON file; docs/speech.md lists every key): which LLM to
// start from, the speech manifests, the encoder's sizes, how the LLM is adapted (LoRA, full or frozen),
// chunk wait-k and φ of the group-streaming layout, optimizer and schedule, checkpoints. Parsed strictly:
// unknown keys, wrong types and out-of-range values are errors naming the key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audio/noise.h"
#include "speech/feature_augment.h"
#include "speech_encoder/speech_encoder_config.h"
#include "stream/paradigm.h"
#include "train/lora.h"
#include "train/optimizer.h"

namespace gpstream::speech {

enum class LlmTraining { Lora, Full, Frozen };

struct SpeechTrainConfig {
  std::string llm_dir;  // streaming LLM directory to start from (its tokenizer and template are used)
  std::string train_manifest, dev_manifest;
  int64_t max_train = 0;  // utterances used (0: all)
  int64_t max_dev = 200;  // dev utterances for the dev loss (0: all)
  std::string output_dir;
  std::string source_lang = "en", target_lang = "en";

  speech_encoder::SpeechEncoderConfig encoder;  // llm_hidden is set from the LLM
  LlmTraining llm_training = LlmTraining::Lora;
  double llm_lr_scale =
      1.0;  // the LLM's learning rate = lr × this (a pretrained LLM fully fine-tuned wants less)
  train::LoraOptions lora{32, 64.0f, 0.0f, {true, true, true, true, true, true, true}};

  // Auxiliary CTC loss on the encoder output (characters, ctc_alphabet.h), weight × its per-character mean
  // added to the LLM's token mean; 0 turns it off. Only training uses the head; it is not exported.
  double ctc_weight = 0.3;
  // Curriculum: the first ctc_only_steps optimizer steps train the encoder with the CTC loss alone (no LLM
  // forward; the LLM does not move), so the LLM starts reading audio rows that already carry the words.
  int64_t ctc_only_steps = 0;

  int k_min = 1, k_max = 9;  // chunk wait-k drawn per utterance
  int export_beam = 1;       // the exported model's word beam (gpstream.json "beam"; stream/word_beam.h)
  int export_k = 0;  // the exported model's default wait-k (gpstream.json "k"), in [k_min, k_max]; 0: k_max
  // The end marker's row sees the whole utterance (stream::SessionOptions::end_after_source); exported
  // into gpstream.json, so inference ends a transcript only with the audio too.
  bool end_after_source = false;
  // Target group start: one value (a number or S), or several drawn per utterance like k (multi-φ: one model
  // for every φ of the list; the first is the exported default).
  std::vector<stream::Phi> phis{stream::Phi{}};
  int64_t max_seq = 320;  // longer utterances (rows of prompt + audio + transcript) are skipped

  int batch_utterances = 8;
  int64_t steps = 2000;
  double max_minutes = 0;  // stop (with a checkpoint and the export) after this much training time; 0: none
  train::Schedule schedule{train::ScheduleKind::Cosine, 1e-3f, 100, 1, 0.1f};
  train::AdamWOptions adam{0.9f, 0.98f, 1e-8f, 0.01f};
  double clip = 1.0;

  bool noise = true;
  audio::NoiseOptions noise_options;
  // Training utterances only (never the dev set): frequency warp and SpecAugment masks on the log-mel
  // features, drawn per utterance and epoch. Off by default.
  speech::FeatureAugmentOptions augment;
  uint64_t seed = 1;
  int threads = 0;
  int64_t log_every = 10;
  int64_t dev_every = 200;  // 0: dev loss at the end only
  int64_t ckpt_every_steps = 100;
  double ckpt_every_minutes = 10.0;  // also a checkpoint after this much training time since the last; 0: off
  int keep_checkpoints = 2;
  int64_t keep_every_steps = 0;  // checkpoints at multiples of this step are never pruned (0: none)

  std::string raw_json;
};

Result<SpeechTrainConfig> parse_speech_train_config(const std::string& json_text,
                                                    const std::string& where = "speech train config");

}  // namespace gpstream::speech
