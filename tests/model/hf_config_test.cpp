// Hugging Face config.json → ModelConfig: real-looking Qwen2 / Llama-3 configs parse to the values
// written in them, and every malformed field is an error that names the field (one test per defect).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../testing/fifo.h"
#include "../testing/fp_bounds.h"
#include "../testing/temp_dir.h"
#include "model/model_config.h"

namespace gpstream::model {
namespace {

using json = nlohmann::json;

// Shaped like Qwen2.5-0.5B's config.json.
json qwen2_config() {
  return json::parse(R"({
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
    "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
    "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0, "sliding_window": 32768,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.43.1",
    "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})");
}

// Shaped like Llama-3.2-1B's config.json.
json llama3_config() {
  return json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
    "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
    "vocab_size": 128256})");
}

Error parse_error(const json& j) {
  Result<ModelConfig> c = config_from_hf_json(j.dump(), "dir/config.json");
  EXPECT_FALSE(c.ok()) << "accepted: " << j.dump();
  if (c.ok()) return Error(ErrorCode::Internal, "<accepted>");
  EXPECT_NE(c.error().message().find("dir/config.json"), std::string::npos) << c.error().message();
  return c.error();
}

void expect_mentions(const Error& e, const std::string& what) {
  EXPECT_NE(e.message().find(what), std::string::npos) << "message lacks '" << what << "': " << e.message();
}

TEST(HfConfig, ParsesQwen2) {
  Result<ModelConfig> r = config_from_hf_json(qwen2_config().dump());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const ModelConfig& c = *r;
  EXPECT_EQ(c.model_type, "qwen2");
  EXPECT_EQ(c.n_vocab, 151936);
  EXPECT_EQ(c.n_embd, 896);
  EXPECT_EQ(c.n_ff, 4864);
  EXPECT_EQ(c.n_layer, 24);
  EXPECT_EQ(c.n_head, 14);
  EXPECT_EQ(c.n_head_kv, 2);
  EXPECT_EQ(c.head_dim, 64);  // 896 / 14: not in the file
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e6f);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::None);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_FALSE(c.o_bias);
  EXPECT_EQ(c.bos_token_id, 151643);
  EXPECT_EQ(c.eos_token_ids, std::vector<int>{151643});
  // Qwen2.5-0.5B has 494,032,768 parameters (its model card says 0.49B): embeddings 136,134,656 plus
  // 24 × (q/k/v/o 1,835,008 + biases 1,152 + MLP 13,074,432 + norms 1,792) plus the final norm 896.
  EXPECT_EQ(c.n_params(), 494032768u);
}

TEST(HfConfig, ParsesLlama3WithRopeScalingAndSeveralEos) {
  Result<ModelConfig> r = config_from_hf_json(llama3_config().dump());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const ModelConfig& c = *r;
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.n_head_kv, 8);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::Llama3);
  EXPECT_FLOAT_EQ(c.rope_scaling.factor, 32.0f);
  EXPECT_FLOAT_EQ(c.rope_scaling.low_freq_factor, 1.0f);
  EXPECT_FLOAT_EQ(c.rope_scaling.high_freq_factor, 4.0f);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int>{128001, 128008, 128009}));
  // Hand values of the llama3 smoothing (theta 5e5, d 64): band i = 0 (wavelength 2π) is kept;
  // i = 31 (wavelength 2π·5e5^(62/64) ≈ 2.0e6 > 8192) is divided by 32.
  std::vector<float> inv = c.rope_inv_freq();
  ASSERT_EQ(inv.size(), 32u);
  EXPECT_FLOAT_EQ(inv[0], 1.0f);
  // The exponent 62/64 and θ are exact in fp32, the power is taken in double and rounded once; /32 is exact.
  EXPECT_NEAR(inv[31], std::pow(5e5, -62.0 / 64.0) / 32.0,
              testing::rounding_bound(std::pow(5e5, -62.0 / 64.0) / 32.0, 1));
}

TEST(HfConfig, NumKeyValueHeadsDefaultsToNumAttentionHeads) {
  json j = qwen2_config();
  j.erase("num_key_value_heads");
  Result<ModelConfig> r = config_from_hf_json(j.dump());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->n_head_kv, 14);
}

TEST(HfConfig, NotAnObject) {
  expect_mentions(parse_error(json::array({1, 2})), "not a JSON object");
}

TEST(HfConfig, TruncatedText) {
  Result<ModelConfig> r = config_from_hf_json("{\"hidden_size\": ", "dir/config.json");
  ASSERT_FALSE(r.ok());
  expect_mentions(r.error(), "dir/config.json");
  expect_mentions(r.error(), "invalid JSON");
}

TEST(HfConfig, MissingHiddenSize) {
  json j = qwen2_config();
  j.erase("hidden_size");
  Error e = parse_error(j);
  expect_mentions(e, "missing field 'hidden_size'");
}

TEST(HfConfig, EachRequiredFieldMissing) {
  for (const char* field : {"vocab_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"}) {
    json j = qwen2_config();
    j.erase(field);
    expect_mentions(parse_error(j), std::string("'") + field + "'");
  }
}

TEST(HfConfig, WrongTypedNumAttentionHeads) {
  json j = qwen2_config();
  j["num_attention_heads"] = "x";
  Error e = parse_error(j);
  expect_mentions(e, "'num_attention_heads' must be an integer");
}

TEST(HfConfig, FractionalLayerCount) {
  json j = qwen2_config();
  j["num_hidden_layers"] = 2.5;
  expect_mentions(parse_error(j), "'num_hidden_layers'");
}

TEST(HfConfig, NegativeAndHugeSizes) {
  json j = qwen2_config();
  j["hidden_size"] = -896;
  // Sizes are integers in [0, 2^30 = 1073741824].
  expect_mentions(parse_error(j),
                  "dir/config.json: field 'hidden_size' must be an integer in [0, 1073741824], got -896");
  j = qwen2_config();
  j["vocab_size"] = int64_t{1} << 40;  // 1099511627776
  expect_mentions(parse_error(j),
                  "field 'vocab_size' must be an integer in [0, 1073741824], got 1099511627776");
}

TEST(HfConfig, ZeroHeadsIsAnErrorNotADivisionByZero) {
  json j = qwen2_config();
  j["num_attention_heads"] = 0;
  expect_mentions(parse_error(j), "num_attention_heads");
}

TEST(HfConfig, HeadsNotAMultipleOfKvHeads) {
  json j = qwen2_config();
  j["num_key_value_heads"] = 3;
  expect_mentions(parse_error(j), "num_key_value_heads (3)");
}

TEST(HfConfig, WrongTypedFloatAndBool) {
  json j = qwen2_config();
  j["rms_norm_eps"] = "1e-6";
  expect_mentions(parse_error(j), "'rms_norm_eps' must be a number");
  j = qwen2_config();
  j["tie_word_embeddings"] = "yes";
  expect_mentions(parse_error(j), "'tie_word_embeddings' must be true or false");
  j = qwen2_config();
  j["eos_token_id"] = "</s>";
  expect_mentions(parse_error(j), "'eos_token_id'");
}

TEST(HfConfig, UnknownArchitecture) {
  json j = qwen2_config();
  j["architectures"] = {"MambaForCausalLM"};
  Error e = parse_error(j);
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  expect_mentions(e, "MambaForCausalLM");
}

TEST(HfConfig, MissingOrEmptyArchitectures) {
  json j = qwen2_config();
  j.erase("architectures");
  expect_mentions(parse_error(j), "'architectures'");
  j["architectures"] = json::array();
  expect_mentions(parse_error(j), "'architectures'");
  j["architectures"] = "Qwen2ForCausalLM";
  expect_mentions(parse_error(j), "'architectures'");
}

TEST(HfConfig, RopeScalingOfAnUnsupportedType) {
  json j = llama3_config();
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  Error e = parse_error(j);
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  expect_mentions(e, "rope_scaling");
  expect_mentions(e, "yarn");
}

TEST(HfConfig, RopeScalingLlama3MissingFactor) {
  json j = llama3_config();
  j["rope_scaling"].erase("factor");
  Error e = parse_error(j);
  expect_mentions(e, "dir/config.json: missing field 'rope_scaling.factor'");
}

TEST(HfConfig, RopeScalingWrongTypes) {
  json j = llama3_config();
  j["rope_scaling"]["original_max_position_embeddings"] = "8k";
  expect_mentions(parse_error(j),
                  "field 'rope_scaling.original_max_position_embeddings' must be an integer, got string");
  j = llama3_config();
  j["rope_scaling"] = "llama3";
  expect_mentions(parse_error(j), "'rope_scaling' must be an object");
  j = llama3_config();
  j["rope_scaling"]["high_freq_factor"] = 0.5;  // below low_freq_factor: the blend would divide by < 0
  expect_mentions(parse_error(j), "high_freq_factor > low_freq_factor");
}

// Token ids the model has no row for: 2^40 was narrowed to an int and kept.
TEST(HfConfig, TokenIdsOutsideTheVocabulary) {
  for (const char* key : {"eos_token_id", "bos_token_id"}) {
    const json huge = int64_t{1} << 40;
    for (json id : {huge, json(-1), json(151936), json::array({json(151643), huge})}) {
      if (id.is_array() && std::string(key) == "bos_token_id") continue;  // bos is one id
      json j = qwen2_config();
      j[key] = id;
      Error e = parse_error(j);
      // The id's path: the key, or the key and the index of the bad entry in a list.
      expect_mentions(e, std::string("field '") + key + (id.is_array() ? "[1]'" : "'"));
      expect_mentions(e, "vocab_size");
    }
  }
  json j = qwen2_config();
  j["eos_token_id"] = 151935;  // the last row
  EXPECT_TRUE(config_from_hf_json(j.dump()).ok());
}

// A deep value was dumped into the error message recursively: 300,000 levels overflowed the stack.
TEST(HfConfig, DeeplyNestedValuesAreRefused) {
  std::string text = qwen2_config().dump();
  text.pop_back();
  text += ",\"hidden_act\":" + std::string(300000, '[') + std::string(300000, ']') + "}";
  Result<ModelConfig> c = config_from_hf_json(text, "dir/config.json");
  ASSERT_FALSE(c.ok());
  expect_mentions(c.error(), "dir/config.json: JSON nested more than");
  json j = qwen2_config();
  j["quantization_config"] =
      json::parse(std::string(kMaxConfigJsonDepth - 1, '[') + std::string(kMaxConfigJsonDepth - 1, ']'));
  EXPECT_TRUE(config_from_hf_json(j.dump()).ok());
}

// A llama3 original context of 0 made every wavelength band a division by zero.
TEST(HfConfig, RopeScalingLlama3NonPositiveOriginalContext) {
  for (int v : {0, -8192}) {
    json j = llama3_config();
    j["rope_scaling"]["original_max_position_embeddings"] = v;
    expect_mentions(parse_error(j), "field 'rope_scaling.original_max_position_embeddings' must be");
  }
  json j = llama3_config();
  j["rope_scaling"]["low_freq_factor"] = 0.0;
  expect_mentions(parse_error(j), "field 'rope_scaling.low_freq_factor' must be positive");
}

TEST(HfConfig, RopeScalingWithoutAType) {
  json j = llama3_config();
  j["rope_scaling"].erase("rope_type");
  expect_mentions(parse_error(j), "rope_scaling");
}

TEST(HfConfig, UnimplementedComputationIsRefusedNotIgnored) {
  json j = llama3_config();
  j["mlp_bias"] = true;
  expect_mentions(parse_error(j), "'mlp_bias'");
  j = llama3_config();
  j["hidden_act"] = "gelu";
  expect_mentions(parse_error(j), "'hidden_act'");
  j = qwen2_config();
  j["use_sliding_window"] = true;
  expect_mentions(parse_error(j), "'use_sliding_window'");
}

TEST(HfConfig, WrittenConfigParsesBack) {
  Result<ModelConfig> a = config_from_hf_json(llama3_config().dump());
  ASSERT_TRUE(a.ok());
  Result<ModelConfig> b = config_from_hf_json(config_to_hf_json(*a));
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->n_vocab, a->n_vocab);
  EXPECT_EQ(b->n_head_kv, a->n_head_kv);
  EXPECT_EQ(b->rope_scaling.type, RopeScalingType::Llama3);
  EXPECT_EQ(b->rope_inv_freq(), a->rope_inv_freq());
  EXPECT_EQ(b->eos_token_ids, a->eos_token_ids);
}

// config.json is opened as a regular file only: a FIFO in its place is refused at once, naming the path
// (testing/fifo.h ends the wait should the guard be missing, so the test fails instead of hanging).
TEST(HfConfig, FifoIsRefusedWithoutBlocking) {
  testing::TempDir dir;
  const std::string fifo = dir.file("config.json");
  ASSERT_TRUE(testing::make_fifo(fifo));
  const auto load = testing::load_without_hanging(fifo, [&] { return load_hf_config(dir.path()); });
  EXPECT_FALSE(load.hung) << "load_hf_config blocked on a FIFO";
  EXPECT_FALSE(load.ok);
  EXPECT_NE(load.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << load.message;
}

}  // namespace
}  // namespace gpstream::model
