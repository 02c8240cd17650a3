// Tensor name table.
#include "model/tensor_names.h"

namespace gpstream::model {

std::string hf_name(TensorId id, int layer) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  switch (id) {
    case TensorId::TokEmbd: return "model.embed_tokens.weight";
    case TensorId::OutputNorm: return "model.norm.weight";
    case TensorId::Output: return "lm_head.weight";
    case TensorId::AttnNorm: return p + "input_layernorm.weight";
    case TensorId::AttnQ: return p + "self_attn.q_proj.weight";
    case TensorId::AttnK: return p + "self_attn.k_proj.weight";
    case TensorId::AttnV: return p + "self_attn.v_proj.weight";
    case TensorId::AttnOut: return p + "self_attn.o_proj.weight";
    case TensorId::AttnQBias: return p + "self_attn.q_proj.bias";
    case TensorId::AttnKBias: return p + "self_attn.k_proj.bias";
    case TensorId::AttnVBias: return p + "self_attn.v_proj.bias";
    case TensorId::AttnOutBias: return p + "self_attn.o_proj.bias";
    case TensorId::FfnNorm: return p + "post_attention_layernorm.weight";
    case TensorId::FfnGate: return p + "mlp.gate_proj.weight";
    case TensorId::FfnUp: return p + "mlp.up_proj.weight";
    case TensorId::FfnDown: return p + "mlp.down_proj.weight";
    case TensorId::AttnPostNorm: return p + "post_attention_layernorm.weight";
    case TensorId::FfnPostNorm: return p + "post_feedforward_layernorm.weight";
    case TensorId::AttnQkv: return p + "self_attn.qkv_proj.weight";
    case TensorId::FfnGateUp: return p + "mlp.gate_up_proj.weight";
  }
  return "";
}

std::string hf_name(const ModelConfig& c, TensorId id, int layer) {
  if (c.sandwich_norms && id == TensorId::FfnNorm)
    return "model.layers." + std::to_string(layer) + ".pre_feedforward_layernorm.weight";
  return hf_name(id, layer);
}

}  // namespace gpstream::model
