// Hugging Face config.json <-> ModelConfig.
#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/half.h"
#include "util/json_text.h"
#include "util/mapped_file.h"
#include "util/memory_budget.h"

namespace gpstream::model {
namespace {

using json = nlohmann::json;

struct Reader {
  const json& j;
  std::string where;

  Result<int> get_int(const char* key, std::optional<int> fallback = std::nullopt) const {
    if (!j.contains(key) || j[key].is_null()) {
      if (fallback) return *fallback;
      return format_error(where + ": missing field '" + key + "'");
    }
    const json& v = j[key];
    if (!v.is_number_integer()) return format_error(where + ": field '" + key + "' must be an integer");
    int64_t x = v.get<int64_t>();
    if (x < 0 || x > (int64_t{1} << 30)) return format_error(where + ": field '" + key + "' out of range: " + v.dump());
    return static_cast<int>(x);
  }
  Result<float> get_float(const char* key, std::optional<float> fallback = std::nullopt) const {
    if (!j.contains(key) || j[key].is_null()) {
      if (fallback) return *fallback;
      return format_error(where + ": missing field '" + key + "'");
    }
    const json& v = j[key];
    if (!v.is_number()) return format_error(where + ": field '" + key + "' must be a number");
    return v.get<float>();
  }
  // A list of numbers of exactly n entries.
  Result<std::vector<float>> get_floats(const char* key, size_t n) const {
    if (!j.contains(key) || !j[key].is_array()) return format_error(where + ": missing list '" + key + "'");
    if (j[key].size() != n)
      return format_error(where + ": list '" + key + "' has " + std::to_string(j[key].size()) + " entries, expected " +
                          std::to_string(n));
    std::vector<float> v;
    for (const json& x : j[key]) {
      if (!x.is_number()) return format_error(where + ": list '" + key + "' must hold numbers");
      v.push_back(x.get<float>());
    }
    return v;
  }
  Result<bool> get_bool(const char* key, bool fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) return format_error(where + ": field '" + key + "' must be true or false");
    return j[key].get<bool>();
  }
};

}  // namespace

int ModelConfig::rope_dim() const {
  // HF: int(head_dim * partial_rotary_factor), kept even.
  const int d = static_cast<int>(static_cast<double>(head_dim) * static_cast<double>(partial_rotary_factor));
  return d - d % 2;
}

float ModelConfig::attention_scale() const {
  const double s = query_pre_attn_scalar > 0 ? query_pre_attn_scalar : head_dim;
  return static_cast<float>(1.0 / std::sqrt(s));
}

namespace {

// HF: 1 / (factor_i · theta^(arange(0, dim, 2) / dim)), in fp32.
std::vector<float> base_inv_freq(float theta, int dim, const std::vector<float>* factors) {
  const int half = dim / 2;
  std::vector<float> inv(half);
  for (int i = 0; i < half; ++i) {
    const float expo = static_cast<float>(2 * i) / static_cast<float>(dim);
    const double f = factors ? static_cast<double>((*factors)[static_cast<size_t>(i)]) : 1.0;
    inv[i] = static_cast<float>(1.0 / (f * std::pow(static_cast<double>(theta), static_cast<double>(expo))));
  }
  return inv;
}

}  // namespace

std::vector<float> ModelConfig::rope_inv_freq_long() const {
  if (rope_scaling.type != RopeScalingType::LongRope) return rope_inv_freq();
  return base_inv_freq(rope_theta, rope_dim(), &rope_scaling.long_factor);
}

std::vector<float> ModelConfig::rope_inv_freq() const {
  const int half = rope_dim() / 2;
  if (rope_scaling.type == RopeScalingType::LongRope)
    return base_inv_freq(rope_theta, rope_dim(), &rope_scaling.short_factor);
  std::vector<float> inv = base_inv_freq(rope_theta, rope_dim(), nullptr);
  if (rope_scaling.type == RopeScalingType::Llama3) {
    // Llama 3.1 frequency smoothing: long wavelengths divided by factor, short kept, a blend between.
    const float factor = rope_scaling.factor;
    const float old_ctx = static_cast<float>(rope_scaling.original_max_position_embeddings);
    const float low_wavelen = old_ctx / rope_scaling.low_freq_factor;
    const float high_wavelen = old_ctx / rope_scaling.high_freq_factor;
    for (int i = 0; i < half; ++i) {
      const float wavelen = 2.0f * static_cast<float>(M_PI) / inv[i];
      float f = inv[i];
      if (wavelen > low_wavelen) {
        f = inv[i] / factor;
      } else if (wavelen >= high_wavelen) {
        const float smooth = (old_ctx / wavelen - rope_scaling.low_freq_factor) /
                             (rope_scaling.high_freq_factor - rope_scaling.low_freq_factor);
        f = (1.0f - smooth) * inv[i] / factor + smooth * inv[i];
      }
      inv[i] = f;
    }
  }
  return inv;
}

Status ModelConfig::validate() const {
  auto bad = [](const std::string& m) { return Status(format_error(m)); };
  if (n_vocab <= 0) return bad("vocab_size must be positive");
  if (n_embd <= 0 || n_ff <= 0 || n_layer <= 0 || n_head <= 0 || n_head_kv <= 0 || head_dim <= 0)
    return bad("hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads and "
               "head_dim must be positive");
  if (n_head % n_head_kv != 0)
    return bad("num_attention_heads (" + std::to_string(n_head) + ") must be a multiple of num_key_value_heads (" +
               std::to_string(n_head_kv) + ")");
  if (head_dim % 2 != 0) return bad("head_dim must be even for RoPE");
  if (!(partial_rotary_factor > 0 && partial_rotary_factor <= 1) || rope_dim() < 2)
    return bad("partial_rotary_factor must be in (0, 1] and leave at least 2 rotated dims");
  if (rope_scaling.type == RopeScalingType::LongRope &&
      (rope_scaling.short_factor.size() != static_cast<size_t>(rope_dim() / 2) ||
       rope_scaling.long_factor.size() != static_cast<size_t>(rope_dim() / 2)))
    return bad("rope_scaling: short_factor and long_factor need rope_dim / 2 entries");
  if (sliding_window < 0 || sliding_window_every < 1) return bad("sliding_window must be >= 0");
  if (attn_softcap < 0 || final_softcap < 0 || query_pre_attn_scalar < 0)
    return bad("soft-caps and query_pre_attn_scalar must be >= 0");
  if (!(norm_eps > 0)) return bad("rms_norm_eps must be positive");
  if (!(rope_theta > 0)) return bad("rope_theta must be positive");
  return {};
}

size_t ModelConfig::n_params() const {
  // Saturating: the sizes come from a file, and an absurd config must give a huge count, not a wrapped one.
  auto u = [](int x) { return static_cast<uint64_t>(std::max(x, 0)); };
  const uint64_t e = u(n_embd), q = saturating_product({u(n_head), u(head_dim)}),
                 kv = saturating_product({u(n_head_kv), u(head_dim)});
  const uint64_t attn = saturating_product({e, saturating_sum({q, q, kv, kv})});
  const uint64_t mlp = saturating_product({3, e, u(n_ff)});
  const uint64_t layer = saturating_sum({attn, mlp, saturating_product({sandwich_norms ? 4u : 2u, e}),
                                         qkv_bias ? saturating_sum({q, kv, kv}) : 0});
  const uint64_t emb = saturating_product({u(n_vocab), e, tie_word_embeddings ? 1u : 2u});
  return saturating_sum({emb, saturating_product({layer, u(n_layer)}), e});
}

namespace {

// sqrt(hidden) rounded to the model's activation dtype, as Hugging Face's Gemma normalizer
// (torch.tensor(hidden ** 0.5, dtype=hidden_states.dtype)).
float gemma_embed_scale(int hidden, const std::string& dtype) {
  const float s = static_cast<float>(std::sqrt(static_cast<double>(hidden)));
  if (dtype == "bfloat16") return bf16_to_f32(f32_to_bf16(s));
  if (dtype == "float16") return f16_to_f32(f32_to_f16(s));
  return s;
}

Status parse_gemma2(const Reader& r, ModelConfig& c) {
  const json& j = r.j;
  std::string act = "gelu_pytorch_tanh";
  for (const char* key : {"hidden_activation", "hidden_act"})
    if (j.contains(key) && j[key].is_string()) {
      act = j[key].get<std::string>();
      break;
    }
  if (act != "gelu_pytorch_tanh" && act != "gelu_tanh")
    return unsupported(r.where + ": field 'hidden_activation' \"" + act +
                       "\" is not supported (supported: gelu_pytorch_tanh)");
  c.hidden_act = HiddenAct::GeluTanh;
  c.embed_scale = gemma_embed_scale(c.n_embd, c.torch_dtype);
  c.norm_weight_offset = 1.0f;
  c.sandwich_norms = true;
  GPS_ASSIGN(c.query_pre_attn_scalar, r.get_float("query_pre_attn_scalar", static_cast<float>(c.head_dim)));
  GPS_ASSIGN(c.attn_softcap, r.get_float("attn_logit_softcapping", 0.0f));
  GPS_ASSIGN(c.final_softcap, r.get_float("final_logit_softcapping", 0.0f));
  GPS_ASSIGN(c.sliding_window, r.get_int("sliding_window", 0));
  c.sliding_window_every = 2;  // HF Gemma2Attention: layers with an even index slide
  GPS_ASSIGN(bool bias, r.get_bool("attention_bias", false));
  if (bias) return unsupported(r.where + ": field 'attention_bias': Gemma 2 attention biases are not supported");
  return {};
}

Status parse_phi3(const Reader& r, ModelConfig& c) {
  const json& j = r.j;
  if (j.contains("hidden_act") && !j["hidden_act"].is_null() && j["hidden_act"] != "silu")
    return unsupported(r.where + ": field 'hidden_act' " + j["hidden_act"].dump() + " is not supported (supported: silu)");
  GPS_ASSIGN(c.partial_rotary_factor, r.get_float("partial_rotary_factor", 1.0f));
  if (!(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1))
    return format_error(r.where + ": field 'partial_rotary_factor' must be in (0, 1]");
  GPS_ASSIGN(c.sliding_window, r.get_int("sliding_window", 0));
  GPS_ASSIGN(bool bias, r.get_bool("attention_bias", false));
  if (bias) return unsupported(r.where + ": field 'attention_bias': Phi-3 attention biases are not supported");
  return {};
}

// longrope (HF _compute_longrope_parameters): when the config has a top-level
// original_max_position_embeddings, factor = max_position_embeddings / it; attention_factor defaults to
// sqrt(1 + ln(factor) / ln(original)) for factor > 1, else 1.
Status parse_longrope(const Reader& r, const Reader& rr, ModelConfig& c) {
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScalingType::LongRope;
  const size_t half = static_cast<size_t>(c.rope_dim() / 2);
  GPS_ASSIGN(s.short_factor, rr.get_floats("short_factor", half));
  GPS_ASSIGN(s.long_factor, rr.get_floats("long_factor", half));
  for (float f : s.short_factor)
    if (!(f > 0)) return format_error(rr.where + ": short_factor entries must be positive");
  for (float f : s.long_factor)
    if (!(f > 0)) return format_error(rr.where + ": long_factor entries must be positive");
  double factor = 1.0;
  if (r.j.contains("original_max_position_embeddings") && !r.j["original_max_position_embeddings"].is_null()) {
    GPS_ASSIGN(s.original_max_position_embeddings, r.get_int("original_max_position_embeddings"));
    if (s.original_max_position_embeddings <= 0)
      return format_error(r.where + ": original_max_position_embeddings must be positive");
    factor = static_cast<double>(c.max_position_embeddings) / s.original_max_position_embeddings;
  } else {
    GPS_ASSIGN(s.original_max_position_embeddings,
               rr.get_int("original_max_position_embeddings", c.max_position_embeddings));
    GPS_ASSIGN(float f, rr.get_float("factor", 1.0f));
    factor = f;
  }
  s.factor = static_cast<float>(factor);
  if (rr.j.contains("attention_factor") && !rr.j["attention_factor"].is_null()) {
    GPS_ASSIGN(s.attention_factor, rr.get_float("attention_factor"));
  } else {
    s.attention_factor =
        factor <= 1.0 ? 1.0f
                      : static_cast<float>(std::sqrt(1.0 + std::log(factor) /
                                                               std::log(static_cast<double>(
                                                                   s.original_max_position_embeddings))));
  }
  if (!(s.attention_factor > 0)) return format_error(rr.where + ": attention_factor must be positive");
  return {};
}

}  // namespace

Result<ModelConfig> config_from_hf_json(const std::string& text, const std::string& where) {
  // Values are dumped into messages (recursively): deeper documents are refused while parsing.
  GPS_ASSIGN(json j, parse_json_bounded(text, where, kMaxConfigJsonDepth));
  if (!j.is_object()) return format_error(where + ": not a JSON object");
  Reader r{j, where};
  ModelConfig c;
  if (!j.contains("architectures") || !j["architectures"].is_array() || j["architectures"].empty() ||
      !j["architectures"][0].is_string())
    return format_error(where + ": missing field 'architectures' (a list with the model class name)");
  c.architecture = j["architectures"][0].get<std::string>();
  if (c.architecture == "LlamaForCausalLM") {
    c.model_type = "llama";
  } else if (c.architecture == "Qwen2ForCausalLM") {
    c.model_type = "qwen2";
    c.qkv_bias = true;
  } else if (c.architecture == "Gemma2ForCausalLM") {
    c.model_type = "gemma2";
  } else if (c.architecture == "Phi3ForCausalLM") {
    c.model_type = "phi3";
    c.fused_qkv = c.fused_gate_up = true;
  } else {
    return unsupported(where + ": architecture '" + c.architecture +
                       "' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, Gemma2ForCausalLM, "
                       "Phi3ForCausalLM)");
  }
  GPS_ASSIGN(c.n_vocab, r.get_int("vocab_size"));
  GPS_ASSIGN(c.n_embd, r.get_int("hidden_size"));
  GPS_ASSIGN(c.n_ff, r.get_int("intermediate_size"));
  GPS_ASSIGN(c.n_layer, r.get_int("num_hidden_layers"));
  GPS_ASSIGN(c.n_head, r.get_int("num_attention_heads"));
  GPS_ASSIGN(c.n_head_kv, r.get_int("num_key_value_heads", c.n_head));
  if (c.n_head <= 0) return format_error(where + ": num_attention_heads must be positive");
  GPS_ASSIGN(c.head_dim, r.get_int("head_dim", c.n_embd / c.n_head));
  GPS_ASSIGN(c.norm_eps, r.get_float("rms_norm_eps", 1e-6f));
  GPS_ASSIGN(c.rope_theta, r.get_float("rope_theta", 10000.0f));
  GPS_ASSIGN(c.max_position_embeddings, r.get_int("max_position_embeddings", 4096));
  // Gemma 2 ties its embeddings unless told otherwise (transformers' Gemma2Config default).
  GPS_ASSIGN(c.tie_word_embeddings, r.get_bool("tie_word_embeddings", c.model_type == "gemma2"));
  if (j.contains("torch_dtype") && j["torch_dtype"].is_string()) c.torch_dtype = j["torch_dtype"].get<std::string>();
  if (c.model_type == "llama") {
    GPS_ASSIGN(bool attention_bias, r.get_bool("attention_bias", false));
    c.qkv_bias = c.o_bias = attention_bias;
    GPS_ASSIGN(c.mlp_bias, r.get_bool("mlp_bias", false));
    // The weights and the forward have no MLP biases: running without them would be silently wrong.
    if (c.mlp_bias) return unsupported(where + ": field 'mlp_bias': MLP biases are not supported");
  }
  if (c.model_type == "gemma2") {
    GPS_TRY(parse_gemma2(r, c));
  } else if (c.model_type == "phi3") {
    GPS_TRY(parse_phi3(r, c));
  } else {
    // Fields that change the computation but are not implemented are refused, never ignored.
    if (j.contains("hidden_act") && !j["hidden_act"].is_null() && j["hidden_act"] != "silu")
      return unsupported(where + ": field 'hidden_act' " + j["hidden_act"].dump() +
                         " is not supported (supported: silu)");
    GPS_ASSIGN(bool sliding, r.get_bool("use_sliding_window", false));
    if (sliding) return unsupported(where + ": field 'use_sliding_window': sliding-window attention is not supported");
  }
  // A token id names a row of the model: in [0, vocab_size), checked before narrowing to int.
  auto token_id = [&](const char* key, const json& v) -> Result<int> {
    const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() < static_cast<uint64_t>(c.n_vocab)
                                                 : v.get<int64_t>() >= 0 && v.get<int64_t>() < c.n_vocab;
    if (!in_range)
      return format_error(where + ": field '" + key + "' " + v.dump() + " is not a token id below " +
                          "vocab_size (" + std::to_string(c.n_vocab) + ")");
    return static_cast<int>(v.get<int64_t>());
  };
  if (j.contains("bos_token_id") && j["bos_token_id"].is_number_integer()) {
    GPS_ASSIGN(c.bos_token_id, token_id("bos_token_id", j["bos_token_id"]));
  }
  if (j.contains("eos_token_id")) {
    const json& e = j["eos_token_id"];
    if (e.is_number_integer()) {
      GPS_ASSIGN(int id, token_id("eos_token_id", e));
      c.eos_token_ids.push_back(id);
    } else if (e.is_array()) {
      for (const json& x : e) {
        if (!x.is_number_integer()) return format_error(where + ": field 'eos_token_id' must hold integers");
        GPS_ASSIGN(int id, token_id("eos_token_id", x));
        c.eos_token_ids.push_back(id);
      }
    } else if (!e.is_null()) {
      return format_error(where + ": field 'eos_token_id' must be an integer or a list");
    }
  }
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    const json& rs = j["rope_scaling"];
    if (!rs.is_object()) return format_error(where + ": field 'rope_scaling' must be an object or null");
    std::string type;
    if (rs.contains("rope_type") && rs["rope_type"].is_string()) type = rs["rope_type"].get<std::string>();
    else if (rs.contains("type") && rs["type"].is_string()) type = rs["type"].get<std::string>();
    Reader rr{rs, where + ": rope_scaling"};
    if (type == "llama3") {
      c.rope_scaling.type = RopeScalingType::Llama3;
      GPS_ASSIGN(c.rope_scaling.factor, rr.get_float("factor"));
      GPS_ASSIGN(c.rope_scaling.low_freq_factor, rr.get_float("low_freq_factor"));
      GPS_ASSIGN(c.rope_scaling.high_freq_factor, rr.get_float("high_freq_factor"));
      GPS_ASSIGN(c.rope_scaling.original_max_position_embeddings, rr.get_int("original_max_position_embeddings"));
      // The smoothing divides the original context by each factor: all must be positive.
      if (c.rope_scaling.original_max_position_embeddings <= 0)
        return format_error(where +
                            ": rope_scaling: field 'original_max_position_embeddings' must be positive");
      if (!(c.rope_scaling.low_freq_factor > 0))
        return format_error(where + ": rope_scaling: field 'low_freq_factor' must be positive");
      if (!(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor) || !(c.rope_scaling.factor > 0))
        return format_error(where + ": rope_scaling: need factor > 0 and high_freq_factor > low_freq_factor");
    } else if (type == "longrope" || (type == "su" && c.model_type == "phi3")) {  // "su": early Phi-3 configs
      GPS_TRY(parse_longrope(r, rr, c));
    } else if (type != "default") {
      return unsupported(where + ": rope_scaling type '" + type +
                         "' is not supported (supported: llama3, longrope, default)");
    }
  }
  if (Status s = c.validate(); !s.ok()) return s.error().with_context(where);
  return c;
}

Result<ModelConfig> load_hf_config(const std::string& model_dir) {
  std::string path = model_dir + "/config.json";
  GPS_ASSIGN(std::string text, read_regular_text_file(path));
  return config_from_hf_json(text, path);
}

std::string config_to_hf_json(const ModelConfig& c) {
  json j;
  j["architectures"] = {c.architecture};
  j["model_type"] = c.model_type;
  j["vocab_size"] = c.n_vocab;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.n_ff;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_head_kv;
  j["head_dim"] = c.head_dim;
  j["rms_norm_eps"] = c.norm_eps;
  j["rope_theta"] = c.rope_theta;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["hidden_act"] = c.hidden_act == HiddenAct::Silu ? "silu" : "gelu_pytorch_tanh";
  j["torch_dtype"] = c.torch_dtype;
  if (c.model_type == "gemma2") {
    j["hidden_activation"] = "gelu_pytorch_tanh";
    j["query_pre_attn_scalar"] = c.query_pre_attn_scalar;
    j["attn_logit_softcapping"] = c.attn_softcap > 0 ? json(c.attn_softcap) : json(nullptr);
    j["final_logit_softcapping"] = c.final_softcap > 0 ? json(c.final_softcap) : json(nullptr);
    j["sliding_window"] = c.sliding_window;
    j["attention_bias"] = false;
  }
  if (c.model_type == "phi3") {
    j["partial_rotary_factor"] = c.partial_rotary_factor;
    j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
    if (c.rope_scaling.type == RopeScalingType::LongRope)
      j["original_max_position_embeddings"] = c.rope_scaling.original_max_position_embeddings;
  }
  if (c.model_type == "llama") {
    j["attention_bias"] = c.qkv_bias;
    j["mlp_bias"] = c.mlp_bias;
  }
  if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_ids.size() == 1) j["eos_token_id"] = c.eos_token_ids[0];
  else if (!c.eos_token_ids.empty()) j["eos_token_id"] = c.eos_token_ids;
  if (c.rope_scaling.type == RopeScalingType::Llama3) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling.factor},
                         {"low_freq_factor", c.rope_scaling.low_freq_factor},
                         {"high_freq_factor", c.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  } else if (c.rope_scaling.type == RopeScalingType::LongRope) {
    j["rope_scaling"] = {{"type", "longrope"},
                         {"short_factor", c.rope_scaling.short_factor},
                         {"long_factor", c.rope_scaling.long_factor},
                         {"attention_factor", c.rope_scaling.attention_factor}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  return j.dump(2) + "\n";
}

}  // namespace gpstream::model
