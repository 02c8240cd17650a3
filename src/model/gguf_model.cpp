// GGUF ↔ ModelConfig and tensors (see gguf_model.h).
#include "model/gguf_model.h"

#include <cstring>
#include <filesystem>

#include "kernels/quant_blocks.h"
#include "model/gguf_families.h"
#include "model/tensor_names.h"
#include "model/weights.h"
#include "util/memory_budget.h"

namespace gpstream::model {
namespace {

std::string arch_key(const GgufArch& a, const std::string& suffix) {
  return std::string(a.gguf) + "." + suffix;
}

Result<int> positive_int(const io::GgufMetadata& m, const std::string& key, std::optional<int64_t> fallback) {
  auto v = m.get_int(key, fallback);
  if (!v.ok()) return v.error();
  if (*v <= 0 || *v > (int64_t{1} << 30))
    return format_error("metadata key " + key + " out of range: " + std::to_string(*v));
  return static_cast<int>(*v);
}

// Reorders the rows of a [n_head * head_dim, ...] tensor (or [n_head * head_dim] bias) within each head:
// to_interleaved: HF row j + s * hd/2 → row 2j + s; otherwise the inverse.
io::TensorData permute_qk(const io::TensorData& t, int n_head, int head_dim, bool to_interleaved,
                          io::TensorMap& storage, const std::string& name) {
  const int64_t rows = t.shape[0];
  const size_t row_bytes = t.bytes.size() / static_cast<size_t>(rows);
  if (row_bytes == 0) return t;  // a tensor with no elements has no rows to reorder
  std::vector<std::byte> out(t.bytes.size());
  const int half = head_dim / 2;
  for (int h = 0; h < n_head; ++h) {
    for (int j = 0; j < half; ++j) {
      for (int s = 0; s < 2; ++s) {
        const int64_t hf_row = int64_t{h} * head_dim + s * half + j;
        const int64_t gguf_row = int64_t{h} * head_dim + 2 * j + s;
        const int64_t src = to_interleaved ? hf_row : gguf_row;
        const int64_t dst = to_interleaved ? gguf_row : hf_row;
        std::memcpy(out.data() + dst * row_bytes, t.bytes.data() + src * row_bytes, row_bytes);
      }
    }
  }
  storage.add_raw(name, t.dtype, t.shape, std::move(out));
  return *storage.find(name);
}

}  // namespace

bool is_gguf_path(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
}

std::vector<float> dequantize_tensor(const io::TensorData& t) {
  const auto n = static_cast<size_t>(t.numel());
  if (!io::dtype_is_quantized(t.dtype)) return io::tensor_to_f32(t);
  std::vector<float> out(n);
  const auto* p = t.bytes.data();
  switch (t.dtype) {
    case io::DType::Q8_0:
      kernels::dequantize_row_q8_0(p, out.data(), static_cast<int64_t>(n));
      break;
    case io::DType::Q4_0:
      kernels::dequantize_row_q4_0(p, out.data(), static_cast<int64_t>(n));
      break;
    case io::DType::Q4_K:
      kernels::dequantize_row_q4_k(p, out.data(), static_cast<int64_t>(n));
      break;
    case io::DType::Q6_K:
      kernels::dequantize_row_q6_k(p, out.data(), static_cast<int64_t>(n));
      break;
    default:
      break;
  }
  return out;
}

Result<ModelConfig> config_from_gguf(const io::GgufFile& g) {
  const io::GgufMetadata& m = g.metadata;
  GPS_ASSIGN(std::string arch_name, m.get_string("general.architecture"));
  const GgufArch* arch = gguf_arch_by_name(arch_name);
  if (!arch)
    return unsupported("general.architecture '" + arch_name +
                       "' is not supported (supported: " + gguf_arch_names() + ")");
  ModelConfig c;
  c.architecture = arch->hf_architecture;
  c.model_type = arch->model_type;
  GPS_ASSIGN(c.n_embd, positive_int(m, arch_key(*arch, "embedding_length"), std::nullopt));
  GPS_ASSIGN(c.n_ff, positive_int(m, arch_key(*arch, "feed_forward_length"), std::nullopt));
  GPS_ASSIGN(c.n_layer, positive_int(m, arch_key(*arch, "block_count"), std::nullopt));
  // Before anything (here, gguf_families, weights_from_tensors) is sized by the count.
  const std::string block_count = "metadata key " + arch_key(*arch, "block_count");
  GPS_TRY(check_layer_count(c.n_layer, g.tensors.tensors.size(), block_count));
  GPS_ASSIGN(c.n_head, positive_int(m, arch_key(*arch, "attention.head_count"), std::nullopt));
  GPS_ASSIGN(c.n_head_kv, positive_int(m, arch_key(*arch, "attention.head_count_kv"), c.n_head));
  GPS_ASSIGN(c.head_dim, positive_int(m, arch_key(*arch, "attention.key_length"), c.n_embd / c.n_head));
  GPS_ASSIGN(int value_length, positive_int(m, arch_key(*arch, "attention.value_length"), c.head_dim));
  if (value_length != c.head_dim)
    return unsupported(arch_key(*arch, "attention.value_length") + " differs from key_length: not supported");
  GPS_ASSIGN(int rope_dims, positive_int(m, arch_key(*arch, "rope.dimension_count"), c.head_dim));
  GPS_ASSIGN(double eps, m.get_float(arch_key(*arch, "attention.layer_norm_rms_epsilon")));
  c.norm_eps = static_cast<float>(eps);
  GPS_ASSIGN(double theta, m.get_float(arch_key(*arch, "rope.freq_base"), 10000.0));
  c.rope_theta = static_cast<float>(theta);
  GPS_ASSIGN(c.max_position_embeddings, positive_int(m, arch_key(*arch, "context_length"), 4096));
  GPS_ASSIGN(std::string scaling, m.get_string(arch_key(*arch, "rope.scaling.type"), "none"));
  if (scaling != "none")
    return unsupported(arch_key(*arch, "rope.scaling.type") + " '" + scaling + "' is not supported");
  if (g.tensors.find("rope_freqs.weight"))
    return unsupported(
        "tensor rope_freqs.weight (llama3 RoPE frequency factors) is not supported from GGUF yet");
  const io::TensorData* embd = g.tensors.find(gguf_name(TensorId::TokEmbd));
  if (!embd || embd->shape.size() != 2)
    return format_error("missing 2-D tensor " + gguf_name(TensorId::TokEmbd));
  if (embd->shape[0] <= 0 || embd->shape[0] > (int64_t{1} << 30))
    return format_error("token_embd: bad vocabulary size");
  c.n_vocab = static_cast<int>(embd->shape[0]);
  c.tie_word_embeddings = g.tensors.find(gguf_name(TensorId::Output)) == nullptr;
  GPS_TRY(read_gguf_family_config(g, *arch, rope_dims, c));
  c.qkv_bias = g.tensors.find(gguf_name(TensorId::AttnQBias, 0)) != nullptr;
  c.o_bias = g.tensors.find(gguf_name(TensorId::AttnOutBias, 0)) != nullptr;
  if (c.model_type == "qwen2" && (!c.qkv_bias || c.o_bias))
    return unsupported("qwen2 needs q/k/v biases and no output-projection bias");
  if (c.model_type == "llama" && c.qkv_bias != c.o_bias)
    return unsupported("llama with attention biases needs all four (q, k, v, output)");
  if ((c.model_type == "gemma2" || c.model_type == "phi3") && (c.qkv_bias || c.o_bias))
    return unsupported("tensor " + gguf_name(c.qkv_bias ? TensorId::AttnQBias : TensorId::AttnOutBias, 0) +
                       ": " + c.model_type + " attention biases are not supported");
  GPS_ASSIGN(int64_t bos, m.get_int("tokenizer.ggml.bos_token_id", -1));
  GPS_ASSIGN(int64_t eos, m.get_int("tokenizer.ggml.eos_token_id", -1));
  if (bos >= 0 && bos < c.n_vocab) c.bos_token_id = static_cast<int>(bos);
  if (eos >= 0 && eos < c.n_vocab) c.eos_token_ids = {static_cast<int>(eos)};
  c.torch_dtype = "float32";
  if (Status s = c.validate(); !s.ok()) return s.error();
  return c;
}

Result<io::TensorMap> hf_tensors_from_gguf(const io::GgufFile& g, const ModelConfig& c) {
  const GgufArch* arch = gguf_arch_by_hf(c.architecture);
  GPS_ASSERT(arch != nullptr, "hf_tensors_from_gguf: config not from a GGUF architecture");
  uint64_t dequantized_bytes = 0;  // what the loop below allocates: k-quants as F32
  for (const auto& [name, t] : g.tensors.tensors)
    if (t.dtype == io::DType::Q4_K || t.dtype == io::DType::Q6_K ||
        (io::dtype_is_quantized(t.dtype) && t.shape.size() != 2))
      dequantized_bytes =
          saturating_sum({dequantized_bytes, saturating_product({static_cast<uint64_t>(t.numel()), 4})});
  GPS_TRY(check_memory_budget(dequantized_bytes, "dequantizing this file's Q4_K / Q6_K tensors to F32"));
  io::TensorMap out;
  out.owners = g.tensors.owners;
  for (const auto& [name, t] : g.tensors.tensors) {
    if (is_gguf_parameter_tensor(name)) continue;  // read into the config (config_from_gguf)
    auto id = tensor_id_from_gguf(name);
    if (!id) return unsupported("tensor " + name + " is not supported for " + arch->gguf);
    id->first = family_tensor_id(c, id->first);
    if (!tensor_in_family(c, id->first))
      return unsupported("tensor " + name + " is not expected in this " + arch->gguf + " model");
    if (id->second >= c.n_layer) return format_error("tensor " + name + ": layer beyond block_count");
    const std::string hf = hf_name(c, id->first, id->second);
    io::TensorData data = t;
    if (data.dtype == io::DType::Q4_K || data.dtype == io::DType::Q6_K ||
        (io::dtype_is_quantized(data.dtype) && data.shape.size() != 2)) {
      out.add_f32(hf, data.shape, dequantize_tensor(data));
      data = *out.find(hf);
    }
    const bool is_q = id->first == TensorId::AttnQ || id->first == TensorId::AttnQBias;
    const bool is_k = id->first == TensorId::AttnK || id->first == TensorId::AttnKBias;
    if (arch->interleaved_qk && (is_q || is_k)) {
      const int heads = is_q ? c.n_head : c.n_head_kv;
      if (data.shape.empty() || data.shape[0] != int64_t{heads} * c.head_dim)
        return format_error("tensor " + name + " has shape " + data.shape_string() + ", expected " +
                            std::to_string(int64_t{heads} * c.head_dim) + " rows");
      data = permute_qk(data, heads, c.head_dim, false, out, hf);
    }
    out.tensors[hf] = data;
  }
  return out;
}

Result<io::GgufMetadata> gguf_metadata_for(const ModelConfig& c, const std::string& name, int file_type) {
  const GgufArch* arch = gguf_arch_by_hf(c.architecture);
  if (!arch)
    return unsupported("architecture " + c.architecture +
                       " cannot be written as GGUF (supported: " + gguf_arch_names() + ")");
  if (c.rope_scaling.type != RopeScalingType::None && c.model_type != "phi3")
    return unsupported("rope_scaling (llama3) cannot be written as GGUF yet");
  if (c.mlp_bias) return unsupported("MLP biases cannot be written as GGUF");
  io::GgufMetadata m;
  using V = io::GgufValue;
  m.set("general.architecture", V::string(arch->gguf));
  m.set("general.type", V::string("model"));
  m.set("general.name", V::string(name));
  m.set("general.file_type", V::u32(static_cast<uint32_t>(file_type)));
  m.set("general.quantization_version", V::u32(2));
  m.set(arch_key(*arch, "vocab_size"), V::u32(static_cast<uint32_t>(c.n_vocab)));
  m.set(arch_key(*arch, "context_length"), V::u32(static_cast<uint32_t>(c.max_position_embeddings)));
  m.set(arch_key(*arch, "embedding_length"), V::u32(static_cast<uint32_t>(c.n_embd)));
  m.set(arch_key(*arch, "feed_forward_length"), V::u32(static_cast<uint32_t>(c.n_ff)));
  m.set(arch_key(*arch, "block_count"), V::u32(static_cast<uint32_t>(c.n_layer)));
  m.set(arch_key(*arch, "attention.head_count"), V::u32(static_cast<uint32_t>(c.n_head)));
  m.set(arch_key(*arch, "attention.head_count_kv"), V::u32(static_cast<uint32_t>(c.n_head_kv)));
  m.set(arch_key(*arch, "attention.key_length"), V::u32(static_cast<uint32_t>(c.head_dim)));
  m.set(arch_key(*arch, "attention.value_length"), V::u32(static_cast<uint32_t>(c.head_dim)));
  m.set(arch_key(*arch, "rope.dimension_count"), V::u32(static_cast<uint32_t>(c.head_dim)));
  m.set(arch_key(*arch, "rope.freq_base"), V::f32(c.rope_theta));
  m.set(arch_key(*arch, "attention.layer_norm_rms_epsilon"), V::f32(c.norm_eps));
  GPS_TRY(write_gguf_family_metadata(c, *arch, m));
  return m;
}

Result<std::vector<io::GgufTensorToWrite>> gguf_tensors_from_hf(const ModelConfig& c, const io::TensorMap& hf,
                                                                io::TensorMap& storage) {
  const GgufArch* arch = gguf_arch_by_hf(c.architecture);
  if (!arch) return unsupported("architecture " + c.architecture + " cannot be written as GGUF");
  std::vector<io::GgufTensorToWrite> out = gguf_family_parameter_tensors(c, storage);
  auto add = [&](TensorId id, int layer) -> Status {
    if (!tensor_in_family(c, id)) return {};
    const std::string name = hf_name(c, id, layer);
    const io::TensorData* t = hf.find(name);
    if (!t) return not_found("missing tensor " + name);
    io::TensorData data = *t;
    const bool is_q = id == TensorId::AttnQ || id == TensorId::AttnQBias;
    const bool is_k = id == TensorId::AttnK || id == TensorId::AttnKBias;
    if (arch->interleaved_qk && (is_q || is_k)) {
      const int heads = is_q ? c.n_head : c.n_head_kv;
      if (data.shape.empty() || data.shape[0] != int64_t{heads} * c.head_dim)
        return format_error("tensor " + name + " has shape " + data.shape_string() + ", expected " +
                            std::to_string(int64_t{heads} * c.head_dim) + " rows");
      data = permute_qk(data, heads, c.head_dim, true, storage, gguf_name(id, layer));
    }
    out.push_back({gguf_name(id, layer), data});
    return {};
  };
  GPS_TRY(add(TensorId::TokEmbd, 0));
  // Block tensors in llama.cpp's order; add() skips those c's family does not have.
  constexpr TensorId kBlock[] = {TensorId::AttnNorm,    TensorId::AttnQ,        TensorId::AttnK,
                                 TensorId::AttnV,       TensorId::AttnQkv,      TensorId::AttnQBias,
                                 TensorId::AttnKBias,   TensorId::AttnVBias,    TensorId::AttnOut,
                                 TensorId::AttnOutBias, TensorId::AttnPostNorm, TensorId::FfnNorm,
                                 TensorId::FfnGate,     TensorId::FfnUp,        TensorId::FfnGateUp,
                                 TensorId::FfnDown,     TensorId::FfnPostNorm};
  for (int il = 0; il < c.n_layer; ++il)
    for (TensorId id : kBlock) GPS_TRY(add(id, il));
  GPS_TRY(add(TensorId::OutputNorm, 0));
  GPS_TRY(add(TensorId::Output, 0));
  return out;
}

}  // namespace gpstream::model
