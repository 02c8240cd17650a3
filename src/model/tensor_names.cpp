// Tensor name and GGUF architecture tables.
#include "model/tensor_names.h"

#include <cstring>

namespace gpstream::model {
namespace {

struct TensorNameRow {
  TensorId id;
  const char* hf;
  const char* gguf;
};

constexpr TensorNameRow kTensorNames[] = {
    {TensorId::TokEmbd, "model.embed_tokens.weight", "token_embd.weight"},
    {TensorId::OutputNorm, "model.norm.weight", "output_norm.weight"},
    {TensorId::Output, "lm_head.weight", "output.weight"},
    {TensorId::AttnNorm, "model.layers.{L}.input_layernorm.weight", "blk.{L}.attn_norm.weight"},
    {TensorId::AttnQ, "model.layers.{L}.self_attn.q_proj.weight", "blk.{L}.attn_q.weight"},
    {TensorId::AttnK, "model.layers.{L}.self_attn.k_proj.weight", "blk.{L}.attn_k.weight"},
    {TensorId::AttnV, "model.layers.{L}.self_attn.v_proj.weight", "blk.{L}.attn_v.weight"},
    {TensorId::AttnOut, "model.layers.{L}.self_attn.o_proj.weight", "blk.{L}.attn_output.weight"},
    {TensorId::AttnQBias, "model.layers.{L}.self_attn.q_proj.bias", "blk.{L}.attn_q.bias"},
    {TensorId::AttnKBias, "model.layers.{L}.self_attn.k_proj.bias", "blk.{L}.attn_k.bias"},
    {TensorId::AttnVBias, "model.layers.{L}.self_attn.v_proj.bias", "blk.{L}.attn_v.bias"},
    {TensorId::AttnOutBias, "model.layers.{L}.self_attn.o_proj.bias", "blk.{L}.attn_output.bias"},
    {TensorId::FfnNorm, "model.layers.{L}.post_attention_layernorm.weight", "blk.{L}.ffn_norm.weight"},
    {TensorId::FfnGate, "model.layers.{L}.mlp.gate_proj.weight", "blk.{L}.ffn_gate.weight"},
    {TensorId::FfnUp, "model.layers.{L}.mlp.up_proj.weight", "blk.{L}.ffn_up.weight"},
    {TensorId::FfnDown, "model.layers.{L}.mlp.down_proj.weight", "blk.{L}.ffn_down.weight"},
    // Gemma 2 and Phi-3 (after the llama rows, so reverse lookups of shared names give the llama ids; the
    // GGUF loader maps them per family with family_tensor_id). Gemma 2's FfnNorm is pre_feedforward_layernorm
    // (hf_name(config, ...)); Phi-3's fused gate_up is GGUF's ffn_up.
    {TensorId::AttnPostNorm, "model.layers.{L}.post_attention_layernorm.weight",
     "blk.{L}.post_attention_norm.weight"},
    {TensorId::FfnPostNorm, "model.layers.{L}.post_feedforward_layernorm.weight",
     "blk.{L}.post_ffw_norm.weight"},
    {TensorId::AttnQkv, "model.layers.{L}.self_attn.qkv_proj.weight", "blk.{L}.attn_qkv.weight"},
    {TensorId::FfnGateUp, "model.layers.{L}.mlp.gate_up_proj.weight", "blk.{L}.ffn_up.weight"},
};

constexpr GgufArch kGgufArchs[] = {
    {"llama", "LlamaForCausalLM", "llama", true},
    {"qwen2", "Qwen2ForCausalLM", "qwen2", false},
    {"gemma2", "Gemma2ForCausalLM", "gemma2", false},  // NEOX RoPE (rotate-half), as Hugging Face
    {"phi3", "Phi3ForCausalLM", "phi3", false},
};

const TensorNameRow& row(TensorId id) {
  for (const auto& r : kTensorNames)
    if (r.id == id) return r;
  return kTensorNames[0];  // unreachable: every id has a row
}

std::string expand(const char* pattern, int layer) {
  std::string s = pattern;
  const auto at = s.find("{L}");
  if (at != std::string::npos) s.replace(at, 3, std::to_string(layer));
  return s;
}

// Matches `name` against a pattern with at most one "{L}" (a decimal layer number without leading zeros).
std::optional<int> match(const char* pattern, const std::string& name) {
  const std::string p = pattern;
  const auto at = p.find("{L}");
  if (at == std::string::npos) return p == name ? std::optional<int>(0) : std::nullopt;
  const std::string head = p.substr(0, at), tail = p.substr(at + 3);
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return std::nullopt;
  const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.size() > 6 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int layer = 0;
  for (char ch : digits) {
    if (ch < '0' || ch > '9') return std::nullopt;
    layer = layer * 10 + (ch - '0');
  }
  return layer;
}

}  // namespace

std::string hf_name(TensorId id, int layer) {
  return expand(row(id).hf, layer);
}

std::string hf_name(const ModelConfig& c, TensorId id, int layer) {
  if (c.sandwich_norms && id == TensorId::FfnNorm)
    return "model.layers." + std::to_string(layer) + ".pre_feedforward_layernorm.weight";
  return hf_name(id, layer);
}
std::string gguf_name(TensorId id, int layer) {
  return expand(row(id).gguf, layer);
}

std::optional<std::pair<TensorId, int>> tensor_id_from_hf(const std::string& name) {
  for (const auto& r : kTensorNames)
    if (auto l = match(r.hf, name)) return std::make_pair(r.id, *l);
  return std::nullopt;
}

std::optional<std::pair<TensorId, int>> tensor_id_from_gguf(const std::string& name) {
  for (const auto& r : kTensorNames)
    if (auto l = match(r.gguf, name)) return std::make_pair(r.id, *l);
  return std::nullopt;
}

std::optional<std::pair<TensorId, int>> tensor_id_from_hf(const ModelConfig& c, const std::string& name) {
  auto id = tensor_id_from_hf(name);
  if (!c.sandwich_norms) return id;
  if (id && id->first == TensorId::FfnNorm)
    id->first = TensorId::AttnPostNorm;  // Gemma 2's post_attention_layernorm
  if (!id)
    if (auto l = match("model.layers.{L}.pre_feedforward_layernorm.weight", name))
      id = std::make_pair(TensorId::FfnNorm, *l);
  return id;
}

TensorId family_tensor_id(const ModelConfig& c, TensorId id) {
  if (c.fused_gate_up && id == TensorId::FfnUp) return TensorId::FfnGateUp;  // one GGUF name, two meanings
  return id;
}

bool tensor_in_family(const ModelConfig& c, TensorId id) {
  switch (id) {
    case TensorId::AttnQ:
    case TensorId::AttnK:
    case TensorId::AttnV:
      return !c.fused_qkv;
    case TensorId::AttnQkv:
      return c.fused_qkv;
    case TensorId::FfnGate:
    case TensorId::FfnUp:
      return !c.fused_gate_up;
    case TensorId::FfnGateUp:
      return c.fused_gate_up;
    case TensorId::AttnQBias:
    case TensorId::AttnKBias:
    case TensorId::AttnVBias:
      return c.qkv_bias;
    case TensorId::AttnOutBias:
      return c.o_bias;
    case TensorId::AttnPostNorm:
    case TensorId::FfnPostNorm:
      return c.sandwich_norms;
    case TensorId::Output:
      return !c.tie_word_embeddings;
    default:
      return true;
  }
}

std::string gguf_arch_names() {
  std::string s;
  for (const auto& a : kGgufArchs) s += std::string(s.empty() ? "" : ", ") + a.gguf;
  return s;
}

const GgufArch* gguf_arch_by_name(const std::string& gguf) {
  for (const auto& a : kGgufArchs)
    if (gguf == a.gguf) return &a;
  return nullptr;
}

const GgufArch* gguf_arch_by_hf(const std::string& hf_architecture) {
  for (const auto& a : kGgufArchs)
    if (hf_architecture == a.hf_architecture) return &a;
  return nullptr;
}

}  // namespace gpstream::model
