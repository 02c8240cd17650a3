// SpeechEncoderModel: the parameter table, seeded initialisation and safetensors save/load.
#include "speech_encoder/speech_encoder_params.h"

#include <cmath>
#include <random>

#include "io/safetensors.h"
#include "io/tensor.h"
#include "util/half.h"

namespace gpstream::speech_encoder {

SpeechEncoderModel::SpeechEncoderModel(const SpeechEncoderConfig& config) : config_(config) {
  GPS_ASSERT(config.validate().ok(), "SpeechEncoderModel: invalid config (validate() it first)");
  const SpeechEncoderConfig& c = config_;
  offsets_.conv1_w = add("encoder.conv1.weight", {c.conv_channels, c.conv_kernel, c.n_mels}, true);
  offsets_.conv1_b = add("encoder.conv1.bias", {c.conv_channels}, false);
  offsets_.conv2_w = add("encoder.conv2.weight", {c.d_model, c.conv_kernel, c.conv_channels}, true);
  offsets_.conv2_b = add("encoder.conv2.bias", {c.d_model}, false);
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    SpeechEncoderLayerOffsets L;
    L.attn_norm = add(p + "attn_norm.weight", {c.d_model}, false);
    L.wq = add(p + "attn.q.weight", {c.d_model, c.d_model}, true);
    L.wk = add(p + "attn.k.weight", {c.d_model, c.d_model}, true);
    L.wv = add(p + "attn.v.weight", {c.d_model, c.d_model}, true);
    L.wo = add(p + "attn.o.weight", {c.d_model, c.d_model}, true);
    if (c.conv_module_kernel > 0) {
      L.conv_norm = add(p + "conv_norm.weight", {c.d_model}, false);
      L.conv_pw1 = add(p + "conv.pw1.weight", {2 * c.d_model, c.d_model}, true);
      L.conv_dw = add(p + "conv.dw.weight", {c.d_model, c.conv_module_kernel}, true);
      L.conv_pw2 = add(p + "conv.pw2.weight", {c.d_model, c.d_model}, true);
    }
    L.ffn_norm = add(p + "ffn_norm.weight", {c.d_model}, false);
    L.w_gate = add(p + "ffn.gate.weight", {c.n_ff, c.d_model}, true);
    L.w_up = add(p + "ffn.up.weight", {c.n_ff, c.d_model}, true);
    L.w_down = add(p + "ffn.down.weight", {c.d_model, c.n_ff}, true);
    offsets_.layers.push_back(L);
  }
  offsets_.norm = add("encoder.norm.weight", {c.d_model}, false);
  offsets_.fc1_w = add("projector.fc1.weight", {c.proj_hidden, c.stack * c.d_model}, true);
  offsets_.fc1_b = add("projector.fc1.bias", {c.proj_hidden}, false);
  offsets_.fc2_w = add("projector.fc2.weight", {c.llm_hidden, c.proj_hidden}, true);
  offsets_.fc2_b = add("projector.fc2.bias", {c.llm_hidden}, false);
  GPS_ASSERT(static_cast<int64_t>(values_.size()) == c.parameter_count(), "parameter_count disagrees");
}

size_t SpeechEncoderModel::add(std::string name, std::vector<int64_t> shape, bool is_matrix) {
  SpeechEncoderTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.is_matrix = is_matrix;
  return io::append_flat_tensor(tensors_, values_, std::move(t));
}

const SpeechEncoderTensor* SpeechEncoderModel::find(const std::string& name) const {
  return io::find_flat_tensor(tensors_, name);
}

void SpeechEncoderModel::init_random(uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Uniform in [-1, 1) from the top 53 bits: the same numbers with every standard library.
  auto uniform = [&rng]() { return static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0; };
  const double residual_scale =
      1.0 / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(config_.n_layer, 1)));
  for (const auto& t : tensors_) {
    float* p = values_.data() + t.offset;
    const bool is_norm = t.name.find("norm.weight") != std::string::npos;
    if (!t.is_matrix) {
      std::fill(p, p + t.numel, is_norm ? 1.0f : 0.0f);
      continue;
    }
    int64_t fan_in = 1;
    for (size_t d = 1; d < t.shape.size(); ++d) fan_in *= t.shape[d];
    double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    if (t.name.ends_with("attn.o.weight") || t.name.ends_with("conv.pw2.weight") ||
        t.name.ends_with("ffn.down.weight"))
      bound *= residual_scale;
    for (size_t i = 0; i < t.numel; ++i) p[i] = static_cast<float>(bound * uniform());
  }
}

Status SpeechEncoderModel::save(const std::string& path, Storage storage) const {
  std::vector<io::TensorToWrite> out;
  out.reserve(tensors_.size());
  std::vector<std::vector<uint16_t>> bf16;  // the BF16 copies, alive until written
  bf16.reserve(tensors_.size());
  for (const auto& t : tensors_) {
    io::TensorData d;
    d.shape = t.shape;
    const float* v = values_.data() + t.offset;
    if (storage == Storage::MatricesBf16 && t.is_matrix) {
      std::vector<uint16_t>& h = bf16.emplace_back(t.numel);
      for (size_t i = 0; i < t.numel; ++i) h[i] = f32_to_bf16(v[i]);
      d.dtype = io::DType::BF16;
      d.bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(h.data()),
                                           t.numel * sizeof(uint16_t));
    } else {
      d.dtype = io::DType::F32;
      d.bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(v), t.numel * sizeof(float));
    }
    out.push_back({t.name, d});
  }
  return io::write_safetensors(path, out, {{kSpeechEncoderMetadataKey, config_.to_json()}});
}

Result<SpeechEncoderModel> SpeechEncoderModel::load(const std::string& path) {
  io::TensorMap map;
  GPS_TRY(io::read_safetensors(path, map));
  const auto meta = map.metadata.find(kSpeechEncoderMetadataKey);
  if (meta == map.metadata.end())
    return format_error(path + ": no \"" + kSpeechEncoderMetadataKey + "\" metadata (not a speech encoder)");
  auto config = SpeechEncoderConfig::from_json(meta->second);
  if (!config.ok()) return config.error().with_context(path);
  // Allocate only what the file holds: a hostile config cannot ask for more memory than the file's size.
  int64_t file_numel = 0;
  for (const auto& [name, t] : map.tensors) file_numel += t.numel();
  if (config->parameter_count() != file_numel)
    return format_error(path + ": the config needs " + std::to_string(config->parameter_count()) +
                        " parameters, the file holds " + std::to_string(file_numel));
  SpeechEncoderModel model(*config);
  for (const auto& t : model.tensors_) {
    const io::TensorData* d = map.find(t.name);
    if (d == nullptr) return format_error(path + ": missing tensor " + t.name);
    if (d->shape != t.shape) {
      io::TensorData want;
      want.shape = t.shape;
      return format_error(path + ": tensor " + t.name + " has shape " + d->shape_string() + ", expected " +
                          want.shape_string());
    }
    if (d->dtype != io::DType::F32 && d->dtype != io::DType::F16 && d->dtype != io::DType::BF16)
      return unsupported(path + ": tensor " + t.name + " has dtype " + io::dtype_name(d->dtype) +
                         " (F32, F16 or BF16 expected)");
    const std::vector<float> v = io::tensor_to_f32(*d);
    for (size_t i = 0; i < t.numel; ++i) {
      if (!std::isfinite(v[i])) return format_error(path + ": tensor " + t.name + " has a non-finite value");
      model.values_[t.offset + i] = v[i];
    }
  }
  if (map.tensors.size() != model.tensors_.size())  // every expected tensor is present: these are extra
    return format_error(path + ": " + std::to_string(map.tensors.size()) + " tensors, expected " +
                        std::to_string(model.tensors_.size()));
  return model;
}

}  // namespace gpstream::speech_encoder
