// LoRA parameter tables and PEFT metadata.
#include "train/lora.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace gpstream::train {

const char* lora_target_module(LoraTarget t) {
  switch (t) {
    case LoraTarget::Q:
      return "q_proj";
    case LoraTarget::K:
      return "k_proj";
    case LoraTarget::V:
      return "v_proj";
    case LoraTarget::O:
      return "o_proj";
    case LoraTarget::Gate:
      return "gate_proj";
    case LoraTarget::Up:
      return "up_proj";
    case LoraTarget::Down:
      return "down_proj";
  }
  return "";
}

Result<LoraTarget> lora_target_from_name(const std::string& name) {
  for (int i = 0; i < kLoraTargets; ++i) {
    const auto t = static_cast<LoraTarget>(i);
    const std::string m = lora_target_module(t);
    if (name == m || name + "_proj" == m) return t;
  }
  return invalid_argument("unknown LoRA target '" + name + "' (expected q, k, v, o, gate, up or down)");
}

std::array<int64_t, 2> lora_target_shape(const model::ModelConfig& c, LoraTarget t) {
  const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim,
                F = c.n_ff;
  switch (t) {
    case LoraTarget::Q:
      return {Q, E};
    case LoraTarget::K:
    case LoraTarget::V:
      return {KV, E};
    case LoraTarget::O:
      return {E, Q};
    case LoraTarget::Gate:
    case LoraTarget::Up:
      return {F, E};
    case LoraTarget::Down:
      return {E, F};
  }
  return {0, 0};
}

ParamSet lora_param_set(const model::ModelConfig& c, const LoraOptions& o, uint64_t seed,
                        std::vector<LoraLayerLayout>& layout) {
  ParamSet p;
  layout.assign(static_cast<size_t>(c.n_layer), LoraLayerLayout{});
  std::mt19937_64 rng(seed);
  for (int il = 0; il < c.n_layer; ++il) {
    for (int ti = 0; ti < kLoraTargets; ++ti) {
      auto& L = layout[static_cast<size_t>(il)];
      L.a[ti] = L.b[ti] = kNoParam;
      if (o.rank <= 0 || !o.targets[ti]) continue;
      const auto t = static_cast<LoraTarget>(ti);
      const auto [out, in] = lora_target_shape(c, t);
      const bool attn = ti <= static_cast<int>(LoraTarget::O);
      const std::string base = "base_model.model.model.layers." + std::to_string(il) +
                               (attn ? ".self_attn." : ".mlp.") + lora_target_module(t);
      L.a[ti] = p.add(base + ".lora_A.weight", {o.rank, in}, ParamKind::Matrix);
      L.b[ti] = p.add(base + ".lora_B.weight", {out, o.rank}, ParamKind::Matrix);
      // PEFT: kaiming_uniform_(a=sqrt(5)) → bound = 1/sqrt(in).
      const float bound = 1.0f / std::sqrt(static_cast<float>(in));
      std::uniform_real_distribution<float> d(-bound, bound);
      for (size_t i = 0; i < static_cast<size_t>(o.rank * in); ++i) p.values[L.a[ti] + i] = d(rng);
    }
  }
  return p;
}

std::string lora_adapter_config_json(const LoraOptions& o, const std::string& base_model) {
  nlohmann::ordered_json j;
  j["peft_type"] = "LORA";
  j["task_type"] = "CAUSAL_LM";
  j["base_model_name_or_path"] = base_model;
  j["r"] = o.rank;
  j["lora_alpha"] = o.alpha;
  j["lora_dropout"] = o.dropout;
  j["bias"] = "none";
  j["fan_in_fan_out"] = false;
  j["inference_mode"] = true;
  j["init_lora_weights"] = true;
  j["use_rslora"] = false;
  j["use_dora"] = false;
  j["modules_to_save"] = nullptr;
  std::vector<std::string> mods;
  for (int i = 0; i < kLoraTargets; ++i)
    if (o.targets[i]) mods.push_back(lora_target_module(static_cast<LoraTarget>(i)));
  j["target_modules"] = mods;
  return j.dump(2) + "\n";
}

}  // namespace gpstream::train
