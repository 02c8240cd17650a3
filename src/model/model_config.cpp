// Hugging Face config.json <-> ModelConfig.
#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/half.h"
#include "util/json_reader.h"
#include "util/mapped_file.h"
#include "util/memory_budget.h"

namespace gpstream::model {
namespace {

using json = nlohmann::json;

// Sizes and counts in config.json: integers in [0, 2^30] (validate() then wants most of them positive).
constexpr int kMaxSize = 1 << 30;
// Real-valued fields: finite floats (validate() checks their signs).
constexpr double kMaxReal = 3.0e38;
// Longest longrope factor list read (rope_dim / 2 entries are needed).
constexpr size_t kMaxRopeFactors = 1 << 16;

// A list of exactly n positive numbers (longrope factors).
Status read_factors(JsonReader& r, const char* key, size_t n, std::vector<float>& out) {
  GPS_ASSIGN(JsonValue list, r.require(key));
  GPS_ASSIGN(std::vector<JsonValue> items, list.elements(kMaxRopeFactors));
  if (items.size() != n)
    return list.error("has " + std::to_string(items.size()) + " entries, expected " + std::to_string(n) +
                      " (rope_dim / 2)");
  out.clear();
  for (const JsonValue& v : items) {
    GPS_ASSIGN(float f, v.real<float>(-kMaxReal, kMaxReal));
    if (!(f > 0)) return v.error("must be positive");
    out.push_back(f);
  }
  return {};
}

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
    return bad(
        "hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads and "
        "head_dim must be positive");
  if (n_head % n_head_kv != 0)
    return bad("num_attention_heads (" + std::to_string(n_head) +
               ") must be a multiple of num_key_value_heads (" + std::to_string(n_head_kv) + ")");
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

Status parse_gemma2(JsonReader& r, ModelConfig& c) {
  // transformers' Gemma2Config takes hidden_activation, then hidden_act; other types are skipped.
  std::string act = "gelu_pytorch_tanh";
  for (const char* key : {"hidden_activation", "hidden_act"})
    if (auto v = r.find(key); v && v->json().is_string()) {
      act = v->json().get<std::string>();
      break;
    }
  if (act != "gelu_pytorch_tanh" && act != "gelu_tanh")
    return unsupported(r.file() + ": field 'hidden_activation' \"" + act +
                       "\" is not supported (supported: gelu_pytorch_tanh)");
  c.hidden_act = HiddenAct::GeluTanh;
  c.embed_scale = gemma_embed_scale(c.n_embd, c.torch_dtype);
  c.norm_weight_offset = 1.0f;
  c.sandwich_norms = true;
  c.query_pre_attn_scalar = static_cast<float>(c.head_dim);
  GPS_TRY(r.optional("query_pre_attn_scalar", c.query_pre_attn_scalar, -kMaxReal, kMaxReal));
  GPS_TRY(r.optional("attn_logit_softcapping", c.attn_softcap, -kMaxReal, kMaxReal));
  GPS_TRY(r.optional("final_logit_softcapping", c.final_softcap, -kMaxReal, kMaxReal));
  GPS_TRY(r.optional("sliding_window", c.sliding_window, 0, kMaxSize));
  c.sliding_window_every = 2;  // HF Gemma2Attention: layers with an even index slide
  bool bias = false;
  GPS_TRY(r.optional("attention_bias", bias));
  if (bias)
    return unsupported(r.file() + ": field 'attention_bias': Gemma 2 attention biases are not supported");
  return {};
}

// hidden_act other than silu changes the computation: refused, never ignored.
Status require_silu(JsonReader& r) {
  auto act = r.find("hidden_act");
  if (act && act->json() != "silu") {
    const std::string shown = act->json().is_primitive() ? act->json().dump() : act->json().type_name();
    return unsupported(r.file() + ": field 'hidden_act' " + shown + " is not supported (supported: silu)");
  }
  return {};
}

Status parse_phi3(JsonReader& r, ModelConfig& c) {
  GPS_TRY(require_silu(r));
  GPS_TRY(r.optional("partial_rotary_factor", c.partial_rotary_factor, -kMaxReal, kMaxReal));
  if (!(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1))
    return r.error("partial_rotary_factor", "must be in (0, 1]");
  GPS_TRY(r.optional("sliding_window", c.sliding_window, 0, kMaxSize));
  bool bias = false;
  GPS_TRY(r.optional("attention_bias", bias));
  if (bias)
    return unsupported(r.file() + ": field 'attention_bias': Phi-3 attention biases are not supported");
  return {};
}

// longrope (HF _compute_longrope_parameters): when the config has a top-level
// original_max_position_embeddings, factor = max_position_embeddings / it; attention_factor defaults to
// sqrt(1 + ln(factor) / ln(original)) for factor > 1, else 1.
Status parse_longrope(JsonReader& r, JsonReader& rr, ModelConfig& c) {
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScalingType::LongRope;
  const size_t half = static_cast<size_t>(c.rope_dim() / 2);
  GPS_TRY(read_factors(rr, "short_factor", half, s.short_factor));
  GPS_TRY(read_factors(rr, "long_factor", half, s.long_factor));
  double factor = 1.0;
  if (r.has("original_max_position_embeddings")) {
    GPS_TRY(r.required("original_max_position_embeddings", s.original_max_position_embeddings, 0, kMaxSize));
    if (s.original_max_position_embeddings <= 0)
      return r.error("original_max_position_embeddings", "must be positive");
    factor = static_cast<double>(c.max_position_embeddings) / s.original_max_position_embeddings;
  } else {
    s.original_max_position_embeddings = c.max_position_embeddings;
    GPS_TRY(rr.optional("original_max_position_embeddings", s.original_max_position_embeddings, 0, kMaxSize));
    float f = 1.0f;
    GPS_TRY(rr.optional("factor", f, -kMaxReal, kMaxReal));
    factor = f;
  }
  s.factor = static_cast<float>(factor);
  if (rr.has("attention_factor")) {
    GPS_TRY(rr.required("attention_factor", s.attention_factor, -kMaxReal, kMaxReal));
  } else {
    s.attention_factor =
        factor <= 1.0 ? 1.0f
                      : static_cast<float>(std::sqrt(
                            1.0 + std::log(factor) /
                                      std::log(static_cast<double>(s.original_max_position_embeddings))));
  }
  if (!(s.attention_factor > 0)) return rr.error("attention_factor", "must be positive");
  return {};
}

}  // namespace

Result<ModelConfig> config_from_hf_json(const std::string& text, const std::string& where) {
  // Values are dumped into messages (recursively): deeper documents are refused while parsing.
  GPS_ASSIGN(json j, parse_json_object(text, where, kMaxConfigJsonDepth));
  // A Hugging Face file: keys gpstream does not read are skipped, as transformers does.
  GPS_ASSIGN(JsonReader r, JsonReader::open(j, where, "", UnknownKeys::Ignore));
  ModelConfig c;
  {
    const Error no_architecture =
        format_error(where + ": missing field 'architectures' (a list with the model class name)");
    auto arch = r.find("architectures");
    if (!arch || !arch->json().is_array() || arch->json().empty() || !arch->json()[0].is_string())
      return no_architecture;
    c.architecture = arch->json()[0].get<std::string>();
  }
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
    return unsupported(
        where + ": architecture '" + c.architecture +
        "' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, Gemma2ForCausalLM, "
        "Phi3ForCausalLM)");
  }
  GPS_TRY(r.required("vocab_size", c.n_vocab, 0, kMaxSize));
  GPS_TRY(r.required("hidden_size", c.n_embd, 0, kMaxSize));
  GPS_TRY(r.required("intermediate_size", c.n_ff, 0, kMaxSize));
  GPS_TRY(r.required("num_hidden_layers", c.n_layer, 0, kMaxSize));
  GPS_TRY(r.required("num_attention_heads", c.n_head, 0, kMaxSize));
  c.n_head_kv = c.n_head;
  GPS_TRY(r.optional("num_key_value_heads", c.n_head_kv, 0, kMaxSize));
  if (c.n_head <= 0) return r.error("num_attention_heads", "must be positive");
  c.head_dim = c.n_embd / c.n_head;
  GPS_TRY(r.optional("head_dim", c.head_dim, 0, kMaxSize));
  c.norm_eps = 1e-6f;
  GPS_TRY(r.optional("rms_norm_eps", c.norm_eps, -kMaxReal, kMaxReal));
  c.rope_theta = 10000.0f;
  GPS_TRY(r.optional("rope_theta", c.rope_theta, -kMaxReal, kMaxReal));
  c.max_position_embeddings = 4096;
  GPS_TRY(r.optional("max_position_embeddings", c.max_position_embeddings, 0, kMaxSize));
  // Gemma 2 ties its embeddings unless told otherwise (transformers' Gemma2Config default).
  c.tie_word_embeddings = c.model_type == "gemma2";
  GPS_TRY(r.optional("tie_word_embeddings", c.tie_word_embeddings));
  if (auto dtype = r.find("torch_dtype"); dtype && dtype->json().is_string())
    c.torch_dtype = dtype->json().get<std::string>();
  if (c.model_type == "llama") {
    bool attention_bias = false;
    GPS_TRY(r.optional("attention_bias", attention_bias));
    c.qkv_bias = c.o_bias = attention_bias;
    c.mlp_bias = false;
    GPS_TRY(r.optional("mlp_bias", c.mlp_bias));
    // The weights and the forward have no MLP biases: running without them would be silently wrong.
    if (c.mlp_bias) return unsupported(where + ": field 'mlp_bias': MLP biases are not supported");
  }
  if (c.model_type == "gemma2") {
    GPS_TRY(parse_gemma2(r, c));
  } else if (c.model_type == "phi3") {
    GPS_TRY(parse_phi3(r, c));
  } else {
    // Fields that change the computation but are not implemented are refused, never ignored.
    GPS_TRY(require_silu(r));
    bool sliding = false;
    GPS_TRY(r.optional("use_sliding_window", sliding));
    if (sliding)
      return unsupported(where + ": field 'use_sliding_window': sliding-window attention is not supported");
  }
  // A token id names a row of the model: in [0, vocab_size), checked before narrowing to int.
  auto token_id = [&](const JsonValue& v) -> Result<int> {
    const json& x = v.json();
    const bool in_range = x.is_number_unsigned() ? x.get<uint64_t>() < static_cast<uint64_t>(c.n_vocab)
                                                 : x.get<int64_t>() >= 0 && x.get<int64_t>() < c.n_vocab;
    if (!in_range)
      return v.error(x.dump() + " is not a token id below vocab_size (" + std::to_string(c.n_vocab) + ")");
    return static_cast<int>(x.get<int64_t>());
  };
  // bos_token_id of another type (transformers never reads it as a list) is skipped, as it always was.
  if (auto bos = r.find("bos_token_id"); bos && bos->json().is_number_integer()) {
    GPS_ASSIGN(c.bos_token_id, token_id(*bos));
  }
  if (auto eos = r.find("eos_token_id")) {
    if (eos->json().is_number_integer()) {
      GPS_ASSIGN(int id, token_id(*eos));
      c.eos_token_ids.push_back(id);
    } else if (eos->json().is_array()) {
      // At most one end token per vocabulary row.
      GPS_ASSIGN(std::vector<JsonValue> ids, eos->elements(static_cast<size_t>(c.n_vocab)));
      for (const JsonValue& x : ids) {
        if (!x.json().is_number_integer()) return x.error("must be an integer token id");
        GPS_ASSIGN(int id, token_id(x));
        c.eos_token_ids.push_back(id);
      }
    } else {
      return eos->error(std::string("must be an integer or a list, got ") + eos->json().type_name());
    }
  }
  GPS_ASSIGN(std::optional<JsonReader> rope_scaling, r.optional_object("rope_scaling"));
  if (rope_scaling) {
    JsonReader& rr = *rope_scaling;
    std::string type;
    if (auto t = rr.find("rope_type"); t && t->json().is_string())
      type = t->json().get<std::string>();
    else if (auto t2 = rr.find("type"); t2 && t2->json().is_string())
      type = t2->json().get<std::string>();
    if (type == "llama3") {
      RopeScaling& s = c.rope_scaling;
      s.type = RopeScalingType::Llama3;
      GPS_TRY(rr.required("factor", s.factor, -kMaxReal, kMaxReal));
      GPS_TRY(rr.required("low_freq_factor", s.low_freq_factor, -kMaxReal, kMaxReal));
      GPS_TRY(rr.required("high_freq_factor", s.high_freq_factor, -kMaxReal, kMaxReal));
      GPS_TRY(
          rr.required("original_max_position_embeddings", s.original_max_position_embeddings, 0, kMaxSize));
      // The smoothing divides the original context by each factor: all must be positive.
      if (s.original_max_position_embeddings <= 0)
        return rr.error("original_max_position_embeddings", "must be positive");
      if (!(s.low_freq_factor > 0)) return rr.error("low_freq_factor", "must be positive");
      if (!(s.high_freq_factor > s.low_freq_factor) || !(s.factor > 0))
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
  if (c.eos_token_ids.size() == 1)
    j["eos_token_id"] = c.eos_token_ids[0];
  else if (!c.eos_token_ids.empty())
    j["eos_token_id"] = c.eos_token_ids;
  if (c.rope_scaling.type == RopeScalingType::Llama3) {
    j["rope_scaling"] = {
        {"rope_type", "llama3"},
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
