// Random weight initialisation.
#include "model/random_init.h"

#include <cmath>
#include <cstring>
#include <random>

#include "model/tensor_names.h"
#include "util/half.h"

namespace gpstream::model {
namespace {

void add(io::TensorMap& m, const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v,
         io::DType dtype) {
  if (dtype == io::DType::F32) {
    m.add_f32(name, std::move(shape), v);
    return;
  }
  std::vector<std::byte> bytes(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t h = dtype == io::DType::BF16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  m.add_raw(name, dtype, std::move(shape), std::move(bytes));
}

}  // namespace

io::TensorMap random_tensors(const ModelConfig& c, const RandomInitOptions& o) {
  std::mt19937_64 rng(o.seed);
  io::TensorMap m;
  auto normal = [&](int64_t n, float std) {
    std::normal_distribution<float> d(0.0f, std);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
  };
  auto norm = [&](int64_t n) {
    std::uniform_real_distribution<float> d(-o.norm_noise, o.norm_noise);
    std::vector<float> v(static_cast<size_t>(n), 1.0f - c.norm_weight_offset);  // effective scale 1
    if (o.norm_noise > 0)
      for (float& x : v) x += d(rng);
    return v;
  };
  const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim;
  const float out_std = o.std / std::sqrt(2.0f * static_cast<float>(c.n_layer));
  auto name = [&](TensorId id, int il = 0) { return hf_name(c, id, il); };
  add(m, name(TensorId::TokEmbd), {c.n_vocab, E}, normal(c.n_vocab * E, o.std), o.dtype);
  for (int il = 0; il < c.n_layer; ++il) {
    add(m, name(TensorId::AttnNorm, il), {E}, norm(E), io::DType::F32);
    if (c.fused_qkv) {
      add(m, name(TensorId::AttnQkv, il), {Q + 2 * KV, E}, normal((Q + 2 * KV) * E, o.std), o.dtype);
    } else {
      add(m, name(TensorId::AttnQ, il), {Q, E}, normal(Q * E, o.std), o.dtype);
      add(m, name(TensorId::AttnK, il), {KV, E}, normal(KV * E, o.std), o.dtype);
      add(m, name(TensorId::AttnV, il), {KV, E}, normal(KV * E, o.std), o.dtype);
    }
    add(m, name(TensorId::AttnOut, il), {E, Q}, normal(E * Q, out_std), o.dtype);
    if (c.qkv_bias) {
      add(m, name(TensorId::AttnQBias, il), {Q}, normal(Q, o.bias_std), io::DType::F32);
      add(m, name(TensorId::AttnKBias, il), {KV}, normal(KV, o.bias_std), io::DType::F32);
      add(m, name(TensorId::AttnVBias, il), {KV}, normal(KV, o.bias_std), io::DType::F32);
    }
    if (c.o_bias) add(m, name(TensorId::AttnOutBias, il), {E}, normal(E, o.bias_std), io::DType::F32);
    if (c.sandwich_norms) {
      add(m, name(TensorId::AttnPostNorm, il), {E}, norm(E), io::DType::F32);
      add(m, name(TensorId::FfnPostNorm, il), {E}, norm(E), io::DType::F32);
    }
    add(m, name(TensorId::FfnNorm, il), {E}, norm(E), io::DType::F32);
    if (c.fused_gate_up) {
      add(m, name(TensorId::FfnGateUp, il), {2 * c.n_ff, E}, normal(2 * c.n_ff * E, o.std), o.dtype);
    } else {
      add(m, name(TensorId::FfnGate, il), {c.n_ff, E}, normal(c.n_ff * E, o.std), o.dtype);
      add(m, name(TensorId::FfnUp, il), {c.n_ff, E}, normal(c.n_ff * E, o.std), o.dtype);
    }
    add(m, name(TensorId::FfnDown, il), {E, c.n_ff}, normal(E * c.n_ff, out_std), o.dtype);
  }
  add(m, name(TensorId::OutputNorm), {E}, norm(E), io::DType::F32);
  if (!c.tie_word_embeddings)
    add(m, name(TensorId::Output), {c.n_vocab, E}, normal(c.n_vocab * E, o.std), o.dtype);
  return m;
}

}  // namespace gpstream::model
