// Hugging Face config.json → ModelConfig for Gemma 2 and Phi-3: configs shaped like gemma-2-9b and
// Phi-3.5-mini-instruct parse to the values written in them (and hand-derived values: the bf16-rounded
// embedding normalizer, longrope's attention factor); bad fields are errors naming the field; written
// configs parse back.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "../testing/fp_bounds.h"
#include "model/model_config.h"
#include "model/rope_frequencies.h"

namespace gpstream::model {
namespace {

using json = nlohmann::json;

// Shaped like gemma-2-9b's config.json.
json gemma2_config() {
  return json::parse(R"({
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": 1,
    "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "gemma2",
    "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8, "pad_token_id": 0,
    "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
    "sliding_window_size": 4096, "torch_dtype": "bfloat16", "transformers_version": "4.42.0.dev0",
    "use_cache": true, "vocab_size": 256000})");
}

// Shaped like Phi-3.5-mini-instruct's config.json (48 short / long factors: head_dim 96).
json phi3_config() {
  json j = json::parse(R"({
    "architectures": ["Phi3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 32000, "hidden_act": "silu", "hidden_size": 3072,
    "initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 131072,
    "model_type": "phi3", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
    "original_max_position_embeddings": 4096, "pad_token_id": 32000, "resid_pdrop": 0.0,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 262144, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "transformers_version": "4.43.3", "use_cache": true, "vocab_size": 32064})");
  json s = json::array(), l = json::array();
  for (int i = 0; i < 48; ++i) {
    s.push_back(1.0 + 0.05 * i);
    l.push_back(1.0 + 1.5 * i);
  }
  j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", s}, {"long_factor", l}};
  return j;
}

Error parse_error(const json& j) {
  Result<ModelConfig> c = config_from_hf_json(j.dump(), "dir/config.json");
  EXPECT_FALSE(c.ok()) << "accepted: " << j.dump();
  if (c.ok()) return Error(ErrorCode::Internal, "<accepted>");
  return c.error();
}

void expect_mentions(const Error& e, const std::string& what) {
  EXPECT_NE(e.message().find(what), std::string::npos) << "message lacks '" << what << "': " << e.message();
}

TEST(HfConfigGemma2, ParsesGemma2_9b) {
  auto c = config_from_hf_json(gemma2_config().dump());
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->model_type, "gemma2");
  EXPECT_EQ(c->head_dim, 256);  // not hidden / heads = 224
  EXPECT_EQ(c->hidden_act, HiddenAct::GeluTanh);
  // sqrt(3584) = 59.8665; bfloat16 steps are 0.25 in [32, 64): 59.75 is nearer than 60.
  EXPECT_EQ(c->embed_scale, 59.75f);
  EXPECT_EQ(c->norm_weight_offset, 1.0f);
  EXPECT_TRUE(c->sandwich_norms);
  EXPECT_FLOAT_EQ(c->attention_scale(), 1.0f / 16.0f);
  EXPECT_EQ(c->attn_softcap, 50.0f);
  EXPECT_EQ(c->final_softcap, 30.0f);
  EXPECT_EQ(c->sliding_window, 4096);
  EXPECT_TRUE(c->layer_slides(0));
  EXPECT_FALSE(c->layer_slides(1));
  EXPECT_TRUE(c->layer_slides(40));
  EXPECT_TRUE(c->tie_word_embeddings);  // Gemma2Config's default
  EXPECT_EQ(c->bos_token_id, 2);
}

TEST(HfConfigGemma2, Float32NormalizerIsTheExactRoot) {
  json j = gemma2_config();
  j["torch_dtype"] = "float32";
  j["hidden_size"] = 2304;
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->embed_scale, 48.0f);
}

TEST(HfConfigGemma2, RefusesWhatItCannotCompute) {
  json j = gemma2_config();
  j["hidden_activation"] = "gelu";
  expect_mentions(parse_error(j), "'hidden_activation'");
  j = gemma2_config();
  j["attention_bias"] = true;
  expect_mentions(parse_error(j), "'attention_bias'");
  j = gemma2_config();
  j["attn_logit_softcapping"] = "big";
  expect_mentions(parse_error(j), "'attn_logit_softcapping'");
  j = gemma2_config();
  j["sliding_window"] = -4;
  expect_mentions(parse_error(j), "'sliding_window'");
}

TEST(HfConfigPhi3, ParsesPhi35MiniWithLongrope) {
  auto c = config_from_hf_json(phi3_config().dump());
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_TRUE(c->fused_qkv);
  EXPECT_TRUE(c->fused_gate_up);
  EXPECT_EQ(c->rope_dim(), 96);
  EXPECT_EQ(c->sliding_window, 262144);
  EXPECT_TRUE(c->layer_slides(1));
  EXPECT_EQ(c->rope_scaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(c->rope_scaling.original_max_position_embeddings, 4096);
  // factor = 131072 / 4096 = 32: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12).
  // Computed in double and rounded to fp32 once.
  EXPECT_NEAR(c->rope_scaling.attention_factor, std::sqrt(17.0 / 12.0),
              testing::rounding_bound(std::sqrt(17.0 / 12.0), 1));
  // inv_freq_i = 1 / (factor_i · 10000^(2i/96)).
  const auto s = c->rope_inv_freq(), l = c->rope_inv_freq_long();
  ASSERT_EQ(s.size(), 48u);
  // fp32 rounds the exponent 2i/96 (u, amplified through θ^e to e·ln θ·u), the factor (3.35: u; 16 is
  // exact) and the result (u; the power is taken in double): ≤ (2 + e ln θ)·u relative.
  auto inv_tol = [](double want, double e) {
    return testing::rounding_bound(want, 2.0 + e * std::log(10000.0));
  };
  EXPECT_EQ(s[0], 1.0f);  // θ^0: exact
  EXPECT_NEAR(l[10], 1.0 / (16.0 * std::pow(10000.0, 20.0 / 96.0)),
              inv_tol(1.0 / (16.0 * std::pow(10000.0, 20.0 / 96.0)), 20.0 / 96.0));
  EXPECT_NEAR(s[47], 1.0 / (3.35 * std::pow(10000.0, 94.0 / 96.0)),
              inv_tol(1.0 / (3.35 * std::pow(10000.0, 94.0 / 96.0)), 94.0 / 96.0));
  // gpstream's rule: long factors from position 4096 (p + 1 > 4096); 4095.5 is past it too.
  const RopeFrequencies r = RopeFrequencies::from_config(*c);
  EXPECT_EQ(&r.for_position(4095.0f), &r.inv_short);
  EXPECT_EQ(&r.for_position(4095.5f), &r.inv_long);
  EXPECT_EQ(&r.for_position(4096.0f), &r.inv_long);
  EXPECT_EQ(r.scale, c->rope_scaling.attention_factor);
}

TEST(HfConfigPhi3, ExplicitAttentionFactorAndPartialRotary) {
  json j = phi3_config();
  j["partial_rotary_factor"] = 0.5;
  json s = json::array();
  for (int i = 0; i < 24; ++i) s.push_back(1.0);
  j["rope_scaling"]["short_factor"] = s;
  j["rope_scaling"]["long_factor"] = s;
  j["rope_scaling"]["attention_factor"] = 1.25;
  auto c = config_from_hf_json(j.dump());
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->rope_dim(), 48);
  EXPECT_EQ(c->rope_scaling.attention_factor, 1.25f);
}

TEST(HfConfigPhi3, BadLongropeFieldsAreNamed) {
  json j = phi3_config();
  j["rope_scaling"]["short_factor"].erase(0);
  expect_mentions(parse_error(j), "field 'rope_scaling.short_factor' has");
  j = phi3_config();
  j["rope_scaling"].erase("long_factor");
  expect_mentions(parse_error(j), "missing field 'rope_scaling.long_factor'");
  j = phi3_config();
  j["rope_scaling"]["long_factor"][3] = "x";
  expect_mentions(parse_error(j), "field 'rope_scaling.long_factor[3]' must be a number, got string");
  j = phi3_config();
  j["rope_scaling"]["short_factor"][0] = -1.0;
  expect_mentions(parse_error(j), "field 'rope_scaling.short_factor[0]' must be positive");
  j = phi3_config();
  j["original_max_position_embeddings"] = 0;
  expect_mentions(parse_error(j), "original_max_position_embeddings");
  j = phi3_config();
  j["hidden_act"] = "gelu";
  expect_mentions(parse_error(j), "'hidden_act'");
  j = phi3_config();
  j["partial_rotary_factor"] = 1.5;
  expect_mentions(parse_error(j), "partial_rotary_factor");
}

TEST(HfConfigFamilies, WrittenConfigsParseBack) {
  for (const json& src : {gemma2_config(), phi3_config()}) {
    auto a = config_from_hf_json(src.dump());
    ASSERT_TRUE(a.ok());
    auto b = config_from_hf_json(config_to_hf_json(*a));
    ASSERT_TRUE(b.ok()) << b.error().message();
    EXPECT_EQ(b->model_type, a->model_type);
    EXPECT_EQ(b->embed_scale, a->embed_scale);
    EXPECT_EQ(b->attention_scale(), a->attention_scale());
    EXPECT_EQ(b->attn_softcap, a->attn_softcap);
    EXPECT_EQ(b->final_softcap, a->final_softcap);
    EXPECT_EQ(b->sliding_window, a->sliding_window);
    EXPECT_EQ(b->sliding_window_every, a->sliding_window_every);
    EXPECT_EQ(b->tie_word_embeddings, a->tie_word_embeddings);
    EXPECT_EQ(b->rope_inv_freq(), a->rope_inv_freq());
    EXPECT_EQ(b->rope_inv_freq_long(), a->rope_inv_freq_long());
    EXPECT_EQ(b->rope_scaling.attention_factor, a->rope_scaling.attention_factor);
  }
}

}  // namespace
}  // namespace gpstream::model
