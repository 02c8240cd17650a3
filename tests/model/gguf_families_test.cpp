// Gemma 2 and Phi-3 through GGUF (model/gguf_families.h).
//  - Round trip: a tiny Gemma 2 / Phi-3 (soft-caps, windows, query_pre_attn_scalar ≠ head_dim, partial
//  rotary,
//    longrope) stored as F32 / F16 / BF16 / Q8_0 / Q4_0, put in llama.cpp form, written as GGUF and read
//    back, gives bit-identical logits to the in-memory llama.cpp-form model, the same config fields, and
//    (F32) the Hugging Face-form model's logits up to the rounding of the folded query scale.
//  - GGUF → Hugging Face form restores Gemma 2's norms.
//  - Errors name the key or tensor (unrepresentable window patterns, bad longrope factors, untied Gemma 2).
// The llama.cpp interoperability cases (LlamaCppWritten, GpstreamWritten) are in gguf_model_test.cpp.
#include "model/gguf_families.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "../testing/forward_bounds.h"
#include "../testing/fp_bounds.h"
#include "../testing/temp_dir.h"
#include "gguf_test_util.h"
#include "io/gguf.h"
#include "model/gguf_model.h"
#include "model/quantize_model.h"
#include "model/tensor_names.h"
#include "model/transformer.h"
#include "tiny_models.h"

namespace gpstream {
namespace {

using testing::causal_logits;
using testing::TempDir;
using testing::write_model_gguf;

// Gemma 2 with hidden 32 (whole Q8_0 blocks) and query_pre_attn_scalar 12 ≠ head_dim 8 (folded into attn_q).
model::ModelConfig gemma2_config() {
  model::ModelConfig c = testing::tiny_gemma2_config(3);
  c.n_embd = 32;
  c.n_ff = 64;
  c.embed_scale = 5.656854152679443f;  // sqrt(32)
  return c;
}

model::ModelConfig phi3_config() {
  model::ModelConfig c = testing::tiny_phi3_config(3);
  c.n_ff = 64;
  c.max_position_embeddings = 64;
  c.rope_scaling.factor = 4.0f;
  return c;
}

// family (gemma2?), storage type
using FamilyCase = std::tuple<bool, io::DType>;
class GgufFamilyRoundTrip : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(GgufFamilyRoundTrip, LogitsOfTheInMemoryModel) {
  const auto [gemma2, type] = GetParam();
  const model::ModelConfig c = gemma2 ? gemma2_config() : phi3_config();
  ASSERT_TRUE(c.validate().ok());
  const io::TensorMap f32 = model::random_tensors(c, testing::tiny_init(11));
  auto form = model::to_llamacpp_form(c, f32);
  ASSERT_TRUE(form.ok()) << form.error().message();
  const model::ModelConfig& fc = form->config;
  if (gemma2) {
    EXPECT_EQ(fc.norm_weight_offset, 0.0f);
    EXPECT_EQ(fc.query_pre_attn_scalar, 8.0f);
    EXPECT_EQ(form->tensors.find("model.layers.0.pre_feedforward_layernorm.weight")->dtype, io::DType::F32);
    EXPECT_EQ(io::tensor_get(*form->tensors.find("model.layers.0.pre_feedforward_layernorm.weight"), 0),
              1.0f + io::tensor_get(*f32.find("model.layers.0.pre_feedforward_layernorm.weight"), 0));
  }
  const io::TensorMap stored = model::convert_model_tensors(fc, form->tensors, type);
  if (io::dtype_is_quantized(type)) {
    const auto down = model::hf_name(model::TensorId::FfnDown, 1);
    ASSERT_EQ(stored.find(down)->dtype, type);
  }
  auto in_memory = testing::tiny_transformer(fc, stored, 2);
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  Status w = write_model_gguf(fc, stored, type, path);
  ASSERT_TRUE(w.ok()) << w.error().message();
  auto loaded = model::Transformer::load(path, 2);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const model::ModelConfig& r = (*loaded)->config();
  EXPECT_EQ(r.architecture, c.architecture);
  EXPECT_EQ(r.tie_word_embeddings, fc.tie_word_embeddings);
  EXPECT_EQ(r.hidden_act, c.hidden_act);
  EXPECT_EQ(r.embed_scale, c.embed_scale);
  EXPECT_EQ(r.norm_weight_offset, fc.norm_weight_offset);
  EXPECT_EQ(r.sandwich_norms, c.sandwich_norms);
  EXPECT_EQ(r.query_pre_attn_scalar, fc.query_pre_attn_scalar);
  EXPECT_EQ(r.attn_softcap, c.attn_softcap);
  EXPECT_EQ(r.final_softcap, c.final_softcap);
  EXPECT_EQ(r.sliding_window, c.sliding_window);
  EXPECT_EQ(r.sliding_window_every, c.sliding_window_every);
  EXPECT_EQ(r.rope_dim(), c.rope_dim());
  EXPECT_EQ(r.fused_qkv, c.fused_qkv);
  EXPECT_EQ(r.fused_gate_up, c.fused_gate_up);
  EXPECT_EQ(r.rope_scaling.type, c.rope_scaling.type);
  EXPECT_EQ(r.rope_scaling.long_factor, c.rope_scaling.long_factor);
  EXPECT_EQ(r.rope_scaling.short_factor, c.rope_scaling.short_factor);
  EXPECT_EQ(r.rope_scaling.original_max_position_embeddings, c.rope_scaling.original_max_position_embeddings);
  EXPECT_EQ(r.rope_scaling.attention_factor, c.rope_scaling.attention_factor);
  // 10 tokens at positions 0.. (windows of 3 cut in) and at 20.. (Phi-3's long factors: p + 1 > 16).
  const std::vector<int> ids = {3, 96, 0, 41, 7, 7, 58, 12, 1, 88};
  for (int first : {0, 20}) {
    const auto want = causal_logits(*in_memory, ids, first);
    const auto got = causal_logits(**loaded, ids, first);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << "logit " << i << " from position " << first;
    if (type ==
        io::DType::F32) {  // llama.cpp form computes the Hugging Face model: the folded scale rounds in fp32
      auto hf = testing::tiny_transformer(c, f32, 2);
      const auto exact = causal_logits(*hf, ids, first);
      double worst = 0;
      for (size_t i = 0; i < exact.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(exact[i] - got[i])));
      // Two fp32 forwards of the same model whose weights differ by the folding's roundings
      // (forward_order_bound, testing/forward_bounds.h): per layer Gemma 2's four norm weights 1 + w (u each,
      // relative in the normed rows), attn_q·fold and the fold factor (2u in q), the two score scales 1/√12
      // and 1/√8 (2u), and the final norm's 1 + w (one more per layer covers it): 9 roundings. Phi-3 folds
      // nothing (the bound holds with room).
      const double tol = testing::forward_order_bound(c, hf->weights(), {.extra_roundings = 9}).logits;
      EXPECT_LE(worst, tol) << "from position " << first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, GgufFamilyRoundTrip,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(io::DType::F32, io::DType::F16, io::DType::BF16,
                                                              io::DType::Q8_0, io::DType::Q4_0)));

TEST(GgufFamilies, HfFormRestoresGemma2Norms) {
  const model::ModelConfig c = gemma2_config();
  const io::TensorMap f32 = model::random_tensors(c, testing::tiny_init(3));
  auto form = model::to_llamacpp_form(c, f32);
  ASSERT_TRUE(form.ok());
  const model::ModelForm back = model::to_hf_form(form->config, form->tensors);
  EXPECT_EQ(back.config.norm_weight_offset, 1.0f);
  for (const char* n : {"model.norm.weight", "model.layers.1.post_feedforward_layernorm.weight",
                        "model.layers.2.pre_feedforward_layernorm.weight",
                        "model.layers.0.post_attention_layernorm.weight"}) {
    const auto a = io::tensor_to_f32(*f32.find(n)), b = io::tensor_to_f32(*back.tensors.find(n));
    ASSERT_EQ(a.size(), b.size()) << n;
    // w → fp32(w + 1) → fp32(· − 1): the add rounds (≤ u·|1 + w|), the subtraction is exact (Sterbenz).
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], testing::kUnitF32 * std::fabs(1.0 + a[i])) << n;
  }
}

TEST(GgufFamilies, Gemma2WindowPatternRoundTrips) {
  // Gemma 2 with every layer sliding: written as a per-layer pattern, read back as every = 1.
  model::ModelConfig c = gemma2_config();
  c.sliding_window_every = 1;
  const io::TensorMap f32 = model::random_tensors(c, testing::tiny_init(4));
  auto form = model::to_llamacpp_form(c, f32);
  ASSERT_TRUE(form.ok());
  auto meta = model::gguf_metadata_for(form->config, "x", 0);
  ASSERT_TRUE(meta.ok()) << meta.error().message();
  const io::GgufValue* pattern = meta->find("gemma2.attention.sliding_window_pattern");
  ASSERT_NE(pattern, nullptr);
  EXPECT_EQ(pattern->ints, std::vector<int64_t>({1, 1, 1}));
  TempDir dir;
  ASSERT_TRUE(write_model_gguf(form->config, form->tensors, io::DType::F32, dir.file("p.gguf")).ok());
  auto loaded = model::Transformer::load(dir.file("p.gguf"), 1);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ((*loaded)->config().sliding_window_every, 1);
}

class GgufFamilyErrors : public ::testing::Test {
 protected:
  // Writes (config in llama.cpp form, tensors) with `edit` applied to the metadata and expects a load error
  // containing `needle`.
  void expect_error(const model::ModelConfig& c, const io::TensorMap& hf,
                    const std::function<void(io::GgufMetadata&, std::vector<io::GgufTensorToWrite>&)>& edit,
                    const std::string& needle) {
    auto form = model::to_llamacpp_form(c, hf);
    ASSERT_TRUE(form.ok());
    auto meta = model::gguf_metadata_for(form->config, "x", 0);
    ASSERT_TRUE(meta.ok()) << meta.error().message();
    io::TensorMap storage;
    auto tensors = model::gguf_tensors_from_hf(form->config, form->tensors, storage);
    ASSERT_TRUE(tensors.ok()) << tensors.error().message();
    edit(*meta, *tensors);
    const std::string path = dir_.file("e.gguf");
    ASSERT_TRUE(io::write_gguf(path, *meta, *tensors).ok());
    auto r = model::Transformer::load(path, 1);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
  }
  TempDir dir_;
};

TEST_F(GgufFamilyErrors, NameTheKeyOrTensor) {
  const model::ModelConfig g = gemma2_config();
  const io::TensorMap gt = model::random_tensors(g, testing::tiny_init(1));
  using Tensors = std::vector<io::GgufTensorToWrite>;
  expect_error(
      g, gt,
      [](io::GgufMetadata& m, Tensors&) {
        m.set("gemma2.attention.sliding_window_pattern",
              io::GgufValue::int_array(io::GgufType::Bool, {0, 1, 1}));
      },
      "gemma2.attention.sliding_window_pattern");
  expect_error(
      g, gt,
      [](io::GgufMetadata& m, Tensors&) {
        m.set("gemma2.attention.sliding_window_pattern",
              io::GgufValue::int_array(io::GgufType::Bool, {1, 0}));
      },
      "gemma2.attention.sliding_window_pattern");
  expect_error(
      g, gt,
      [](io::GgufMetadata& m, Tensors&) { m.set("gemma2.attn_logit_softcapping", io::GgufValue::f32(-1)); },
      "gemma2.attn_logit_softcapping");
  expect_error(
      g, gt,
      [](io::GgufMetadata& m, Tensors&) {
        m.set("gemma2.attention.sliding_window", io::GgufValue::string("4"));
      },
      "gemma2.attention.sliding_window");
  expect_error(
      g, gt,
      [](io::GgufMetadata& m, Tensors&) { m.set("gemma2.rope.dimension_count", io::GgufValue::u32(4)); },
      "gemma2.rope.dimension_count");
  expect_error(
      g, gt,
      [&](io::GgufMetadata&, Tensors& t) {
        t.push_back({"output.weight", t.front().data});
      },
      "output.weight");

  const model::ModelConfig p = phi3_config();
  const io::TensorMap pt = model::random_tensors(p, testing::tiny_init(2));
  expect_error(
      p, pt,
      [](io::GgufMetadata& m, Tensors&) { m.set("phi3.rope.dimension_count", io::GgufValue::u32(10)); },
      "phi3.rope.dimension_count");
  expect_error(
      p, pt, [](io::GgufMetadata& m, Tensors&) { m.set("phi3.rope.dimension_count", io::GgufValue::u32(4)); },
      "rope_factors_long.weight");  // 3 factors for 4 rotated dims
  expect_error(
      p, pt,
      [](io::GgufMetadata&, Tensors& t) {
        std::erase_if(t,
                      [](const io::GgufTensorToWrite& x) { return x.name == "rope_factors_short.weight"; });
      },
      "rope_factors_short.weight");
  expect_error(
      p, pt,
      [](io::GgufMetadata& m, Tensors&) {
        m.set("phi3.rope.scaling.original_context_length", io::GgufValue::u32(0));
      },
      "phi3.rope.scaling.original_context_length");
  expect_error(
      p, pt,
      [](io::GgufMetadata&, Tensors& t) {
        for (auto& x : t)
          if (x.name == "blk.0.attn_qkv.weight") x.name = "blk.0.attn_q.weight";
      },
      "blk.0.attn_q.weight");
}

TEST(GgufFamilies, UnrepresentableModelsAreRefusedWhenWriting) {
  model::ModelConfig g = gemma2_config();
  g.tie_word_embeddings = false;
  const io::TensorMap gt = model::random_tensors(g, testing::tiny_init(1));
  auto form = model::to_llamacpp_form(g, gt);
  ASSERT_FALSE(form.ok());
  EXPECT_NE(form.error().message().find("untied lm_head"), std::string::npos);
  // Not in llama.cpp form.
  auto meta = model::gguf_metadata_for(gemma2_config(), "x", 0);
  ASSERT_FALSE(meta.ok());
  EXPECT_NE(meta.error().message().find("llama.cpp form"), std::string::npos);
  model::ModelConfig p = phi3_config();
  p.head_dim = 16;  // 4 heads x 16 != hidden 32
  auto pm = model::gguf_metadata_for(p, "x", 0);
  ASSERT_FALSE(pm.ok());
  EXPECT_NE(pm.error().message().find("head_dim"), std::string::npos);
}

}  // namespace
}  // namespace gpstream
