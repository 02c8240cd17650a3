// Forward parity against independent references committed as fixtures (tests/model/data/README.md):
// a float64 PyTorch implementation written from the Hugging Face modeling code (every case: causal,
// group layouts at φ = 0, 0.5, 512.25, batch-stream, interleaved) and llama.cpp's own forward
// (consecutive positions). Tolerance: forward_order_bound (testing/forward_bounds.h) — against the float64
// reference one fp32 side, against llama.cpp two fp32 sides with their own code, and for llama.cpp on Gemma
// 2, whose CPU GELU reads an fp16 table, that table's rounding per layer. The files' "tolerance" fields
// (1e-4, 1e-2) were measured, not derived, and are not read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../testing/forward_bounds.h"
#include "model/transformer.h"
#include "util/mapped_file.h"

namespace gpstream {
namespace {

const std::string kData = std::string(GPSTREAM_SOURCE_DIR) + "/tests/model/data/";

void check_cases(const std::string& fixture, const std::string& file) {
  auto tf = model::Transformer::load(kData + fixture, 2);
  ASSERT_TRUE(tf.ok()) << tf.error().message();
  auto text = read_text_file(kData + fixture + "/" + file);
  ASSERT_TRUE(text.ok()) << text.error().message();
  auto j = nlohmann::json::parse(*text);
  ASSERT_FALSE(j["cases"].empty());
  const int V = (*tf)->config().n_vocab;
  const model::ModelConfig& cfg = (*tf)->config();
  const bool python = file == "expected.json";
  // llama.cpp's GELU table is indexed by the fp16-rounded input and holds fp16 values: (1 + max slope 1.13)
  // fp16 roundings (2^-11 = 2^13 u) per layer.
  const double gelu_table = !python && cfg.hidden_act == model::HiddenAct::GeluTanh ? 2.13 * 8192 : 0;
  for (const auto& c : j["cases"]) {
    testing::ForwardBoundOptions o;
    o.against_reference = python;
    o.shared_code = false;
    o.max_rows = static_cast<int64_t>(c["ids"].size());
    o.extra_roundings = gelu_table;
    const double tol = testing::forward_order_bound(cfg, (*tf)->weights(), o).logits;
    model::KvCache cache((*tf)->config());
    model::Batch b;
    const auto& ids = c["ids"];
    const std::string groups = c["groups"];
    for (size_t i = 0; i < ids.size(); ++i)
      b.add({.id = ids[i].get<int>(),
             .pos = c["positions"][i].get<float>(),
             .group = groups[i] == 's' ? model::Group::Source : model::Group::Target,
             .n_src = c["n_src"][i].get<int>(),
             .n_tgt = c["n_tgt"][i].get<int>(),
             .logits = true});
    std::vector<float> logits;
    Status s = (*tf)->forward(b, cache, logits);
    ASSERT_TRUE(s.ok()) << s.error().message();
    double worst = 0;
    for (size_t r = 0; r < ids.size(); ++r)
      for (int v = 0; v < V; ++v)
        worst = std::max(worst, std::fabs(logits[r * V + v] - c["logits"][r][v].get<double>()));
    EXPECT_LE(worst, tol) << fixture << "/" << file << " case " << c["name"];
  }
}

class FixtureParity : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureParity, MatchesPythonReference) {
  check_cases(GetParam(), "expected.json");
}
TEST_P(FixtureParity, MatchesLlamaCpp) {
  check_cases(GetParam(), "expected_llamacpp.json");
}

INSTANTIATE_TEST_SUITE_P(Models, FixtureParity,
                         ::testing::Values("llama3_untied_f32", "llama_tied_bf16", "qwen2_tied_f32",
                                           "qwen2_untied_f16", "gemma2_tied_f32", "gemma2_tied_bf16",
                                           "phi3_longrope_f32"));

}  // namespace
}  // namespace gpstream
