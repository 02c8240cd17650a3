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
    std::vector<float> v(static_cast<size_t>(n), 1.0f);
    if (o.norm_noise > 0)
      for (float& x : v) x += d(rng);
    return v;
  };
  const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim;
  const float out_std = o.std / std::sqrt(2.0f * static_cast<float>(c.n_layer));
  add(m, hf_name(TensorId::TokEmbd), {c.n_vocab, E}, normal(c.n_vocab * E, o.std), o.dtype);
  for (int il = 0; il < c.n_layer; ++il) {
    add(m, hf_name(TensorId::AttnNorm, il), {E}, norm(E), io::DType::F32);
    add(m, hf_name(TensorId::AttnQ, il), {Q, E}, normal(Q * E, o.std), o.dtype);
    add(m, hf_name(TensorId::AttnK, il), {KV, E}, normal(KV * E, o.std), o.dtype);
    add(m, hf_name(TensorId::AttnV, il), {KV, E}, normal(KV * E, o.std), o.dtype);
    add(m, hf_name(TensorId::AttnOut, il), {E, Q}, normal(E * Q, out_std), o.dtype);
    if (c.qkv_bias) {
      add(m, hf_name(TensorId::AttnQBias, il), {Q}, normal(Q, o.bias_std), io::DType::F32);
      add(m, hf_name(TensorId::AttnKBias, il), {KV}, normal(KV, o.bias_std), io::DType::F32);
      add(m, hf_name(TensorId::AttnVBias, il), {KV}, normal(KV, o.bias_std), io::DType::F32);
    }
    if (c.o_bias) add(m, hf_name(TensorId::AttnOutBias, il), {E}, normal(E, o.bias_std), io::DType::F32);
    add(m, hf_name(TensorId::FfnNorm, il), {E}, norm(E), io::DType::F32);
    add(m, hf_name(TensorId::FfnGate, il), {c.n_ff, E}, normal(c.n_ff * E, o.std), o.dtype);
    add(m, hf_name(TensorId::FfnUp, il), {c.n_ff, E}, normal(c.n_ff * E, o.std), o.dtype);
    add(m, hf_name(TensorId::FfnDown, il), {E, c.n_ff}, normal(E * c.n_ff, out_std), o.dtype);
  }
  add(m, hf_name(TensorId::OutputNorm), {E}, norm(E), io::DType::F32);
  if (!c.tie_word_embeddings) add(m, hf_name(TensorId::Output), {c.n_vocab, E}, normal(c.n_vocab * E, o.std), o.dtype);
  return m;
}

}  // namespace gpstream::model
