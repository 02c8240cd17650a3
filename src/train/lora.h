// LoRA adapters (Hu et al. 2021, as PEFT implements them): a frozen linear W gains y += s · B A drop(x),
// s = alpha / rank, A: [rank, in] (Kaiming-uniform init as PEFT), B: [out, rank] (zero init), dropout on
// the adapter's input only. Tensors carry PEFT's names
// (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight), so the ParamSet saves directly as
// adapter_model.safetensors. Merging adds s · B A into W.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "train/params.h"
#include "util/error.h"

namespace gpstream::train {

enum class LoraTarget { Q, K, V, O, Gate, Up, Down };
constexpr int kLoraTargets = 7;

// "q_proj", "k_proj", ..., "down_proj" (PEFT's target_modules spelling).
const char* lora_target_module(LoraTarget t);
Result<LoraTarget> lora_target_from_name(const std::string& name);

struct LoraOptions {
  int rank = 0;  // 0: LoRA off (full fine-tuning)
  float alpha = 16.0f;
  float dropout = 0.0f;
  std::array<bool, kLoraTargets> targets{true, true, true, true, true, true, true};
  float scale() const { return rank > 0 ? alpha / static_cast<float>(rank) : 0.0f; }
};

struct LoraLayerLayout {
  std::array<size_t, kLoraTargets> a, b;  // kNoParam where not targeted
};

// (out, in) of target t's base weight.
std::array<int64_t, 2> lora_target_shape(const model::ModelConfig& c, LoraTarget t);

// The adapters' tensors (PEFT names), initialised with `seed` (A Kaiming-uniform, B zero).
ParamSet lora_param_set(const model::ModelConfig& c, const LoraOptions& o, uint64_t seed,
                        std::vector<LoraLayerLayout>& layout);

// adapter_config.json for PEFT.
std::string lora_adapter_config_json(const LoraOptions& o, const std::string& base_model);

}  // namespace gpstream::train
