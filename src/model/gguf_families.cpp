// Gemma 2 and Phi-3 GGUF metadata, parameter tensors and llama.cpp form (see gguf_families.h).
#include "model/gguf_families.h"

#include <cmath>

#include "model/gguf_model.h"

namespace gpstream::model {
namespace {

constexpr const char* kRopeFactorsLong = "rope_factors_long.weight";
constexpr const char* kRopeFactorsShort = "rope_factors_short.weight";
// gpstream's own key: Gemma 2's embedding normalizer as the source model rounded it (Hugging Face rounds
// sqrt(hidden) to the activation dtype; llama.cpp uses sqrtf(hidden) and ignores this key).
constexpr const char* kEmbedScaleKey = "gpstream.embedding_scale";
// llama.cpp always soft-caps Gemma 2; a cap this large leaves every fp32 value as it is (tanh(x/c)·c == x).
constexpr double kNoCap = 1e9;
// llama.cpp's gemma2 needs some sliding layer; a window no sequence reaches stands for "none".
constexpr int64_t kNoWindow = int64_t{1} << 30;

std::string key(const GgufArch& a, const std::string& suffix) {
  return std::string(a.gguf) + "." + suffix;
}

// llama.cpp's fixed Gemma 2 query scale is 1/sqrt(this) (src/models/gemma2.cpp).
float llamacpp_query_scalar(const ModelConfig& c) {
  return static_cast<float>(c.n_layer == 46 ? c.n_embd / c.n_head : c.head_dim);
}

// Gemma 2's norm tensors by Hugging Face name (pre_feedforward_layernorm is not in the llama-layout table).
bool is_gemma2_norm(const std::string& hf) {
  static const std::string kSuffix = "norm.weight";
  return hf.size() >= kSuffix.size() && hf.compare(hf.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

// Replaces `t` (named `name` in `map`) with f(value) for each value, as an F32 tensor `map` owns.
template <class F>
void map_to_f32(io::TensorMap& map, const std::string& name, io::TensorData& t, F f) {
  std::vector<float> v = dequantize_tensor(t);
  for (float& x : v) x = f(x);
  io::TensorMap tmp;
  tmp.add_f32(name, t.shape, std::move(v));
  map.owners.insert(map.owners.end(), tmp.owners.begin(), tmp.owners.end());
  t = tmp.tensors.at(name);
}

Result<float> cap_from(const io::GgufMetadata& m, const std::string& k, double fallback) {
  GPS_ASSIGN(double v, m.get_float(k, fallback));
  if (!(v > 0) || !std::isfinite(v)) return format_error("metadata key " + k + " must be a positive number");
  return v >= kNoCap ? 0.0f : static_cast<float>(v);
}

// Which layers slide: {arch}.attention.sliding_window_pattern is llama.cpp's per-layer bool array, or a
// period n (layer il slides iff il % n < n - 1). gpstream represents "il % every == 0" (or no sliding layer).
Status read_gemma2_pattern(const io::GgufMetadata& m, const std::string& k, ModelConfig& c) {
  const io::GgufValue* v = m.find(k);
  if (!v) {
    c.sliding_window_every = 2;
    return {};
  }
  std::vector<bool> slides(static_cast<size_t>(c.n_layer));
  if (v->is_array()) {
    if (v->array_size() != static_cast<size_t>(c.n_layer) ||
        (v->elem_type != io::GgufType::Bool && v->ints.empty()))
      return format_error("metadata key " + k + " must be " + std::to_string(c.n_layer) +
                          " booleans (one per layer)");
    for (size_t i = 0; i < slides.size(); ++i) slides[i] = v->ints[i] != 0;
  } else if (v->is_int()) {
    if (v->i < 0 || v->i > c.n_layer + 1) return format_error("metadata key " + k + " out of range");
    for (int il = 0; il < c.n_layer; ++il)
      slides[static_cast<size_t>(il)] = v->i == 0 || il % v->i < v->i - 1;
  } else {
    return format_error("metadata key " + k + " must be a bool array or an integer");
  }
  bool any = false;
  for (bool s : slides) any = any || s;
  if (!any) {
    c.sliding_window = 0;
    return {};
  }
  for (int every = 1; every <= c.n_layer; ++every) {
    bool same = true;
    for (int il = 0; il < c.n_layer && same; ++il)
      same = slides[static_cast<size_t>(il)] == (il % every == 0);
    if (same) {
      c.sliding_window_every = every;
      return {};
    }
  }
  return unsupported("metadata key " + k +
                     ": this pattern of sliding layers is not representable (gpstream slides "
                     "layers il % n == 0)");
}

Status read_gemma2(const io::GgufFile& g, const GgufArch& a, int rope_dims, ModelConfig& c) {
  const io::GgufMetadata& m = g.metadata;
  if (rope_dims != c.head_dim)
    return unsupported(key(a, "rope.dimension_count") + " " + std::to_string(rope_dims) +
                       " != head dimension " + std::to_string(c.head_dim) +
                       ": partial RoPE is not supported for gemma2");
  if (!c.tie_word_embeddings)
    return unsupported(
        "tensor output.weight: llama.cpp's gemma2 always uses token_embd as the output matrix");
  c.hidden_act = HiddenAct::GeluTanh;
  c.sandwich_norms = true;
  c.norm_weight_offset = 0.0f;  // the file's norms hold 1 + w
  c.query_pre_attn_scalar = llamacpp_query_scalar(c);
  GPS_ASSIGN(c.attn_softcap, cap_from(m, key(a, "attn_logit_softcapping"), 50.0));
  GPS_ASSIGN(c.final_softcap, cap_from(m, key(a, "final_logit_softcapping"), 30.0));
  GPS_ASSIGN(int64_t window, m.get_int(key(a, "attention.sliding_window")));
  if (window <= 0)
    return format_error("metadata key " + key(a, "attention.sliding_window") + " must be positive");
  c.sliding_window = window >= kNoWindow ? 0 : static_cast<int>(window);
  GPS_TRY(read_gemma2_pattern(m, key(a, "attention.sliding_window_pattern"), c));
  // Files without gpstream's key get llama.cpp's normalizer, sqrtf(hidden).
  GPS_ASSIGN(double scale, m.get_float(kEmbedScaleKey, std::sqrt(static_cast<double>(c.n_embd))));
  if (!(scale > 0) || !std::isfinite(scale))
    return format_error(std::string("metadata key ") + kEmbedScaleKey + " must be positive");
  c.embed_scale = static_cast<float>(scale);
  return {};
}

Result<std::vector<float>> rope_factors(const io::GgufFile& g, const char* name, int n) {
  const io::TensorData* t = g.tensors.find(name);
  if (!t)
    return format_error(std::string("tensor ") + name + " is missing (longrope needs both factor tensors)");
  if (t->dtype != io::DType::F32 || t->shape.size() != 1 || t->shape[0] != n)
    return format_error(std::string("tensor ") + name + " must be F32 [" + std::to_string(n) +
                        "] (rope dimensions / 2), got " + io::dtype_name(t->dtype) + " " + t->shape_string());
  std::vector<float> v = io::tensor_to_f32(*t);
  for (float f : v)
    if (!(f > 0) || !std::isfinite(f))
      return format_error(std::string("tensor ") + name + ": factors must be positive");
  return v;
}

Status read_phi3(const io::GgufFile& g, const GgufArch& a, int rope_dims, ModelConfig& c) {
  const io::GgufMetadata& m = g.metadata;
  if (rope_dims % 2 != 0 || rope_dims > c.head_dim)
    return format_error(key(a, "rope.dimension_count") + " " + std::to_string(rope_dims) +
                        " must be even and at most the head dimension " + std::to_string(c.head_dim));
  c.fused_qkv = c.fused_gate_up = true;
  // partial_rotary_factor such that rope_dim() = int(head_dim * factor) gives rope_dims back.
  c.partial_rotary_factor = static_cast<float>(rope_dims) / static_cast<float>(c.head_dim);
  while (c.rope_dim() < rope_dims) c.partial_rotary_factor = std::nextafter(c.partial_rotary_factor, 2.0f);
  GPS_ASSIGN(int64_t window, m.get_int(key(a, "attention.sliding_window"), 0));
  if (window < 0 || window > kNoWindow)
    return format_error("metadata key " + key(a, "attention.sliding_window") + " out of range");
  c.sliding_window =
      window >= kNoWindow ? 0 : static_cast<int>(window);  // llama.cpp ignores it; transformers does not
  c.sliding_window_every = 1;
  const bool has_long = g.tensors.find(kRopeFactorsLong) != nullptr,
             has_short = g.tensors.find(kRopeFactorsShort) != nullptr;
  if (!has_long && !has_short) return {};
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScalingType::LongRope;
  GPS_ASSIGN(s.long_factor, rope_factors(g, kRopeFactorsLong, rope_dims / 2));
  GPS_ASSIGN(s.short_factor, rope_factors(g, kRopeFactorsShort, rope_dims / 2));
  const std::string orig_key = key(a, "rope.scaling.original_context_length");
  GPS_ASSIGN(int64_t orig, m.get_int(orig_key));
  if (orig <= 0 || orig > (int64_t{1} << 30))
    return format_error("metadata key " + orig_key + " out of range");
  s.original_max_position_embeddings = static_cast<int>(orig);
  const double factor = static_cast<double>(c.max_position_embeddings) / static_cast<double>(orig);
  s.factor = static_cast<float>(factor);
  // As transformers (and llama.cpp's converter) compute it when the file does not say.
  const double computed =
      factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(static_cast<double>(orig)));
  GPS_ASSIGN(double af, m.get_float(key(a, "rope.scaling.attn_factor"), computed));
  if (!(af > 0) || !std::isfinite(af))
    return format_error("metadata key " + key(a, "rope.scaling.attn_factor") + " must be positive");
  s.attention_factor = static_cast<float>(af);
  return {};
}

}  // namespace

bool is_gguf_parameter_tensor(const std::string& name) {
  return name == kRopeFactorsLong || name == kRopeFactorsShort;
}

Status read_gguf_family_config(const io::GgufFile& g, const GgufArch& arch, int rope_dims, ModelConfig& c) {
  if (c.model_type == "gemma2") return read_gemma2(g, arch, rope_dims, c);
  if (c.model_type == "phi3") return read_phi3(g, arch, rope_dims, c);
  if (rope_dims != c.head_dim)
    return unsupported(key(arch, "rope.dimension_count") + " " + std::to_string(rope_dims) +
                       " != head dimension " + std::to_string(c.head_dim) +
                       ": partial RoPE is not supported for " + arch.gguf);
  if (g.tensors.find(kRopeFactorsLong) || g.tensors.find(kRopeFactorsShort))
    return unsupported(std::string("tensor ") + kRopeFactorsLong + " (longrope) is only supported for phi3");
  return {};
}

Status write_gguf_family_metadata(const ModelConfig& c, const GgufArch& a, io::GgufMetadata& m) {
  using V = io::GgufValue;
  if (c.model_type == "gemma2") {
    if (c.norm_weight_offset != 0.0f || c.query_pre_attn_scalar != llamacpp_query_scalar(c) ||
        !c.tie_word_embeddings)
      return invalid_argument(
          "gemma2: the model must be in llama.cpp form (to_llamacpp_form) to be written as GGUF");
    if (c.hidden_act != HiddenAct::GeluTanh || !c.sandwich_norms)
      return unsupported("gemma2: needs tanh GELU and sandwich norms");
    if (c.rope_dim() != c.head_dim)
      return unsupported("gemma2: partial_rotary_factor cannot be written as GGUF");
    m.set(key(a, "attn_logit_softcapping"),
          V::f32(c.attn_softcap > 0 ? c.attn_softcap : static_cast<float>(kNoCap)));
    m.set(key(a, "final_logit_softcapping"),
          V::f32(c.final_softcap > 0 ? c.final_softcap : static_cast<float>(kNoCap)));
    m.set(key(a, "attention.sliding_window"),
          V::u32(static_cast<uint32_t>(c.sliding_window > 0 ? c.sliding_window : kNoWindow)));
    if (c.sliding_window > 0 && c.sliding_window_every != 2) {  // llama.cpp's default: il % 2 == 0 slides
      std::vector<int64_t> slides;
      for (int il = 0; il < c.n_layer; ++il) slides.push_back(c.layer_slides(il) ? 1 : 0);
      m.set(key(a, "attention.sliding_window_pattern"), V::int_array(io::GgufType::Bool, slides));
    }
    m.set(kEmbedScaleKey, V::f32(c.embed_scale));
    return {};
  }
  if (c.model_type == "phi3") {
    if (!c.fused_qkv || !c.fused_gate_up) return unsupported("phi3: needs fused qkv_proj and gate_up_proj");
    if (c.n_head * c.head_dim != c.n_embd)
      return unsupported(
          "phi3: num_attention_heads * head_dim != hidden_size cannot be written as GGUF (llama.cpp splits "
          "attn_qkv by hidden_size)");
    if (c.rope_scaling.type == RopeScalingType::Llama3)
      return unsupported("phi3: llama3 rope_scaling cannot be written as GGUF");
    m.set(key(a, "rope.dimension_count"), V::u32(static_cast<uint32_t>(c.rope_dim())));
    m.set(key(a, "attention.sliding_window"), V::u32(static_cast<uint32_t>(c.sliding_window)));
    if (c.rope_scaling.type == RopeScalingType::LongRope) {
      m.set(key(a, "rope.scaling.original_context_length"),
            V::u32(static_cast<uint32_t>(c.rope_scaling.original_max_position_embeddings)));
      m.set(key(a, "rope.scaling.attn_factor"), V::f32(c.rope_scaling.attention_factor));
    }
    return {};
  }
  if (c.rope_dim() != c.head_dim)
    return unsupported(std::string(a.gguf) + ": partial RoPE cannot be written as GGUF");
  return {};
}

std::vector<io::GgufTensorToWrite> gguf_family_parameter_tensors(const ModelConfig& c,
                                                                 io::TensorMap& storage) {
  std::vector<io::GgufTensorToWrite> out;
  if (c.model_type != "phi3" || c.rope_scaling.type != RopeScalingType::LongRope) return out;
  const auto n = static_cast<int64_t>(c.rope_scaling.long_factor.size());
  storage.add_f32(kRopeFactorsLong, {n}, c.rope_scaling.long_factor);
  storage.add_f32(kRopeFactorsShort, {n}, c.rope_scaling.short_factor);
  out.push_back({kRopeFactorsLong, *storage.find(kRopeFactorsLong)});
  out.push_back({kRopeFactorsShort, *storage.find(kRopeFactorsShort)});
  return out;
}

Result<ModelForm> to_llamacpp_form(const ModelConfig& c, const io::TensorMap& hf) {
  ModelForm f{c, hf};
  if (c.model_type != "gemma2" || c.norm_weight_offset == 0.0f) return f;  // already in llama.cpp form
  const std::string out_name = hf_name(TensorId::Output);
  if (const io::TensorData* out = hf.find(out_name)) {
    const io::TensorData* emb = hf.find(hf_name(TensorId::TokEmbd));
    if (!c.tie_word_embeddings && (!emb || dequantize_tensor(*emb) != dequantize_tensor(*out)))
      return unsupported(
          "gemma2 with an untied lm_head cannot be written as GGUF (llama.cpp's gemma2 always uses "
          "token_embd as the output matrix)");
    f.tensors.tensors.erase(out_name);
  }
  f.config.tie_word_embeddings = true;
  const float llama_scalar = llamacpp_query_scalar(c);
  const float fold =
      c.query_pre_attn_scalar == llama_scalar
          ? 1.0f
          : static_cast<float>(std::sqrt(static_cast<double>(llama_scalar) / c.query_pre_attn_scalar));
  for (auto& [name, t] : f.tensors.tensors) {
    const auto id = tensor_id_from_hf(name);
    if (is_gemma2_norm(name)) {
      map_to_f32(f.tensors, name, t, [](float x) { return 1.0f + x; });
    } else if (id && id->first == TensorId::AttnQ && fold != 1.0f) {
      map_to_f32(f.tensors, name, t, [fold](float x) { return x * fold; });
    }
  }
  f.config.norm_weight_offset = 0.0f;
  f.config.query_pre_attn_scalar = llama_scalar;
  return f;
}

ModelForm to_hf_form(const ModelConfig& c, const io::TensorMap& tensors) {
  ModelForm f{c, tensors};
  if (c.model_type != "gemma2" || c.norm_weight_offset != 0.0f) return f;
  for (auto& [name, t] : f.tensors.tensors)
    if (is_gemma2_norm(name)) map_to_f32(f.tensors, name, t, [](float x) { return x - 1.0f; });
  f.config.norm_weight_offset = 1.0f;
  return f;
}

}  // namespace gpstream::model
