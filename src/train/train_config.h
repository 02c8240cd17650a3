// The `gpstream train` configuration (a JSON file; docs/training.md lists every key). Parsed strictly:
// unknown keys, wrong types and out-of-range values are errors naming the key. Paths are used as given
// (relative to the working directory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/tensor.h"
#include "model/model_config.h"
#include "stream/model_meta.h"
#include "train/dataset.h"
#include "train/lora.h"
#include "train/optimizer.h"

namespace gpstream::train {

struct ScratchModel {
  int vocab_size = 0;  // 0: the tokenizer's vocabulary size
  int hidden_size = 256;
  int intermediate_size = 768;
  int num_hidden_layers = 6;
  int num_attention_heads = 8;
  int num_key_value_heads = 4;
  bool tie_word_embeddings = true;
  float rope_theta = 10000.0f;
  int max_position_embeddings = 2048;
  float rms_norm_eps = 1e-5f;
  float init_std = 0.02f;
};

struct TrainConfig {
  std::string init_dir;                 // Hugging Face directory to start from, or empty
  std::optional<ScratchModel> scratch;  // sizes of a new model (exactly one of init_dir / scratch)
  std::string tokenizer;                // tokenizer.json (file or folder); "bytes" for the byte codec
  std::string template_name = "gpstream";
  std::string source_lang = "en", target_lang = "fr";

  std::string train_tsv, dev_tsv;
  int64_t max_train_pairs = 0, max_dev_pairs = 0;
  DataOptions data;

  AdamWOptions adam;
  Schedule schedule;  // lr, warm-up, kind, min_lr_ratio (total_steps is derived)
  double clip = 1.0;
  int grad_accum = 1;
  int64_t steps = 0;         // optimizer steps; or
  int64_t token_budget = 0;  // stop after this many training tokens
  double max_minutes = 0;    // stop (final checkpoint, export) after this much training time; 0: none
  LoraOptions lora;
  std::string lora_init;  // PEFT adapter folder to start from (optional)

  uint64_t seed = 1;
  int threads = 0;
  int64_t log_every = 10;
  int64_t dev_every = 0;  // 0: dev loss at the end only
  int64_t ckpt_every_steps = 0;
  double ckpt_every_minutes = 10.0;
  int keep_checkpoints = 3;
  int64_t keep_every_steps = 0;  // checkpoints at multiples of this step are never pruned (0: none)
  std::string output_dir;
  io::DType export_dtype = io::DType::F32;
  bool merge_lora = false;

  std::string raw_json;  // the file as given (copied into the output folder)
};

Result<TrainConfig> parse_train_config(const std::string& json_text,
                                       const std::string& where = "train config");

}  // namespace gpstream::train
