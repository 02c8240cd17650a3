// Flat parameter sets.
#include "train/params.h"

#include <cstring>

#include "model/tensor_names.h"
#include "util/half.h"

namespace gpstream::train {

size_t ParamSet::add(std::string name, std::vector<int64_t> shape, ParamKind kind) {
  ParamTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.kind = kind;
  return io::append_flat_tensor(tensors, values, std::move(t));
}

const ParamTensor* ParamSet::find(const std::string& name) const {
  return io::find_flat_tensor(tensors, name);
}

Status ParamSet::load(const io::TensorMap& from, bool allow_missing) {
  for (const ParamTensor& t : tensors) {
    const io::TensorData* d = from.find(t.name);
    if (!d) {
      if (allow_missing) continue;
      return not_found("missing tensor '" + t.name + "'");
    }
    if (d->shape != t.shape) {
      io::TensorData want;
      want.shape = t.shape;
      return format_error("tensor '" + t.name + "' has shape " + d->shape_string() + ", expected " +
                          want.shape_string());
    }
    std::vector<float> v = io::tensor_to_f32(*d);
    std::memcpy(values.data() + t.offset, v.data(), t.numel * sizeof(float));
  }
  return {};
}

io::TensorMap ParamSet::to_tensors(io::DType dtype) const {
  io::TensorMap m;
  for (const ParamTensor& t : tensors) {
    const float* p = values.data() + t.offset;
    if (dtype == io::DType::F32) {
      m.add_f32(t.name, t.shape, std::vector<float>(p, p + t.numel));
      continue;
    }
    std::vector<std::byte> bytes(t.numel * 2);
    for (size_t i = 0; i < t.numel; ++i) {
      const uint16_t h = dtype == io::DType::BF16 ? f32_to_bf16(p[i]) : f32_to_f16(p[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
    m.add_raw(t.name, dtype, t.shape, std::move(bytes));
  }
  return m;
}

ParamSet model_param_set(const model::ModelConfig& c, ModelLayout& layout) {
  using model::TensorId;
  auto name = [&](TensorId id, int il = 0) { return model::hf_name(c, id, il); };
  ParamSet p;
  const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim,
                F = c.n_ff;
  const auto rows = [E](int64_t r) { return static_cast<size_t>(r * E); };
  layout.tok_embd = p.add(name(TensorId::TokEmbd), {c.n_vocab, E}, ParamKind::Embedding);
  layout.layers.clear();
  for (int il = 0; il < c.n_layer; ++il) {
    LayerLayout L;
    L.attn_norm = p.add(name(TensorId::AttnNorm, il), {E}, ParamKind::Norm);
    if (c.fused_qkv) {
      L.wq = p.add(name(TensorId::AttnQkv, il), {Q + 2 * KV, E}, ParamKind::Matrix);
      L.wk = L.wq + rows(Q);
      L.wv = L.wq + rows(Q + KV);
    } else {
      L.wq = p.add(name(TensorId::AttnQ, il), {Q, E}, ParamKind::Matrix);
      L.wk = p.add(name(TensorId::AttnK, il), {KV, E}, ParamKind::Matrix);
      L.wv = p.add(name(TensorId::AttnV, il), {KV, E}, ParamKind::Matrix);
    }
    L.bq = L.bk = L.bv = L.bo = L.attn_post_norm = L.ffn_post_norm = kNoParam;
    if (c.qkv_bias) {
      L.bq = p.add(name(TensorId::AttnQBias, il), {Q}, ParamKind::Bias);
      L.bk = p.add(name(TensorId::AttnKBias, il), {KV}, ParamKind::Bias);
      L.bv = p.add(name(TensorId::AttnVBias, il), {KV}, ParamKind::Bias);
    }
    L.wo = p.add(name(TensorId::AttnOut, il), {E, Q}, ParamKind::Matrix);
    if (c.o_bias) L.bo = p.add(name(TensorId::AttnOutBias, il), {E}, ParamKind::Bias);
    if (c.sandwich_norms) {
      L.attn_post_norm = p.add(name(TensorId::AttnPostNorm, il), {E}, ParamKind::Norm);
      L.ffn_post_norm = p.add(name(TensorId::FfnPostNorm, il), {E}, ParamKind::Norm);
    }
    L.ffn_norm = p.add(name(TensorId::FfnNorm, il), {E}, ParamKind::Norm);
    if (c.fused_gate_up) {
      L.w_gate = p.add(name(TensorId::FfnGateUp, il), {2 * F, E}, ParamKind::Matrix);
      L.w_up = L.w_gate + rows(F);
    } else {
      L.w_gate = p.add(name(TensorId::FfnGate, il), {F, E}, ParamKind::Matrix);
      L.w_up = p.add(name(TensorId::FfnUp, il), {F, E}, ParamKind::Matrix);
    }
    L.w_down = p.add(name(TensorId::FfnDown, il), {E, F}, ParamKind::Matrix);
    layout.layers.push_back(L);
  }
  layout.output_norm = p.add(name(TensorId::OutputNorm), {E}, ParamKind::Norm);
  layout.output = c.tie_word_embeddings ? layout.tok_embd
                                        : p.add(name(TensorId::Output), {c.n_vocab, E}, ParamKind::Matrix);
  return p;
}

}  // namespace gpstream::train
