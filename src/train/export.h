// Export of a trained model: a Hugging Face directory (config.json, model.safetensors in F32 or BF16,
// generation_config.json, tokenizer.json copied, gpstream.json with how it was trained) that
// model::Transformer::load and transformers read, and PEFT LoRA adapters (adapter_config.json +
// adapter_model.safetensors with PEFT's tensor names). Import: load_peft_adapter.
#pragma once

#include <string>

#include "io/tensor.h"
#include "stream/model_meta.h"
#include "train/train_model.h"

namespace gpstream::train {

struct HfExportOptions {
  io::DType dtype = io::DType::F32;
  bool merge_lora = true;      // LoRA runs: write W + s·B·A (else the frozen base as it is)
  std::string tokenizer_path;  // tokenizer.json (file or folder) to copy; empty: none
  stream::ModelMeta meta;      // written as gpstream.json
};

Status export_hf(TrainModel& model, const std::string& dir, const HfExportOptions& options);
Status export_peft(const TrainModel& model, const std::string& dir, const std::string& base_model);
// Loads adapter_model.safetensors (PEFT names) into the model's LoRA parameters; shapes must match.
Status load_peft_adapter(TrainModel& model, const std::string& dir);

}  // namespace gpstream::train
