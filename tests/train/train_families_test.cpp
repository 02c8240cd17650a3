// TrainModel on Gemma 2 and Phi-3 tiny models (sliding windows of 3 rows per group, soft-caps, sandwich
// norms, embedding scale, fused q/k/v and gate/up, partial rotary, longrope crossing its threshold):
// training logits equal model::Transformer's on the same layouts; LoRA gradients follow the chain rule
// from the full gradients of the merged model (the full gradients themselves are checked against torch
// autograd by TrainModel.GradientsMatchPyTorchFixtures).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../testing/forward_bounds.h"
#include "model/kv_cache.h"
#include "train/train_model.h"
#include "train_test_util.h"

namespace gpstream::train {
namespace {

using testing::group_sequence;

TrainBatch family_batch(int n_vocab) {
  TrainBatch b;
  b.seqs.push_back(group_sequence(1, n_vocab, 0.5f));
  b.seqs.push_back(group_sequence(2, n_vocab, 0.0f));
  // Causal, positions 10..21: Phi-3's tiny longrope switches to the long factors at 16 within the sequence.
  TrainSequence s;
  for (int i = 0; i < 12; ++i)
    s.push((i * 37 + 5) % n_vocab, 10.0f + static_cast<float>(i), 0, i + 1, 0, (i * 11 + 3) % n_vocab);
  b.seqs.push_back(s);
  return b;
}

std::unique_ptr<TrainModel> make_model(const model::ModelConfig& c, const io::TensorMap& t,
                                       const LoraOptions& lora) {
  auto m = TrainModel::create(c, t, lora, 7, TrainShape{64, 32}, 2);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return std::move(m).value();
}

std::vector<model::ModelConfig> families() {
  return {testing::tiny_gemma2_config(), testing::tiny_phi3_config()};
}

TEST(TrainFamilies, LogitsEqualInferenceForward) {
  for (const auto& c : families()) {
    SCOPED_TRACE(c.model_type);
    const io::TensorMap t = model::random_tensors(c, testing::tiny_init(3));
    auto tm = make_model(c, t, LoraOptions{});
    auto inf = testing::tiny_transformer(c, t);
    TrainBatch b = family_batch(c.n_vocab);
    ForwardOptions fo;
    fo.all_logits = true;
    ASSERT_TRUE(tm->forward(b, fo).ok());
    int64_t row = 0;
    for (const TrainSequence& s : b.seqs) {
      model::Batch mb;
      for (size_t i = 0; i < s.size(); ++i)
        mb.add({.id = s.ids[i],
                .pos = s.positions[i],
                .group = static_cast<model::Group>(s.groups[i]),
                .n_src = s.n_src[i],
                .n_tgt = s.n_tgt[i],
                .logits = true});
      model::KvCache cache(c);
      std::vector<float> logits;
      ASSERT_TRUE(inf->forward(mb, cache, logits).ok());
      // The training forward (its own attention, norm and activation code, sgemm over all rows) against
      // the inference one: forward_order_bound with other code on both sides (testing/forward_bounds.h).
      const double tol =
          gpstream::testing::forward_order_bound(
              c, inf->weights(), {.shared_code = false, .max_rows = static_cast<int64_t>(s.size())})
              .logits;
      for (size_t i = 0; i < logits.size(); ++i)
        ASSERT_NEAR(tm->logits()[row * c.n_vocab + static_cast<int64_t>(i)], logits[i], tol) << "row " << row;
      row += static_cast<int64_t>(s.size());
    }
  }
}

// The base tensor a LoRA target adapts and the first row of its block (Phi-3's fused tensors hold q, k, v
// and gate, up as row blocks).
std::pair<const ParamTensor*, int64_t> base_of(const ParamSet& base, const model::ModelConfig& c,
                                               std::string stem) {
  stem = stem.substr(std::string("base_model.model.").size());
  const std::string layer = stem.substr(0, stem.rfind('.') + 1);
  const std::string module = stem.substr(stem.rfind('.') + 1);
  const int64_t Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim;
  if (c.fused_qkv && (module == "q_proj" || module == "k_proj" || module == "v_proj"))
    return {base.find(layer + "qkv_proj.weight"), module == "q_proj" ? 0 : module == "k_proj" ? Q : Q + KV};
  if (c.fused_gate_up && (module == "gate_proj" || module == "up_proj"))
    return {base.find(layer + "gate_up_proj.weight"), module == "gate_proj" ? 0 : c.n_ff};
  return {base.find(stem + ".weight"), 0};
}

TEST(TrainFamilies, LoraGradientFollowsTheChainRule) {
  for (const auto& c : families()) {
    SCOPED_TRACE(c.model_type);
    const io::TensorMap t = model::random_tensors(c, testing::tiny_init(9));
    LoraOptions lo;
    lo.rank = 3;
    lo.alpha = 6.0f;
    auto tm = make_model(c, t, lo);
    std::mt19937_64 rng(11);
    std::normal_distribution<float> nd(0.0f, 0.2f);
    for (float& v : tm->lora().values) v += nd(rng);  // B non-zero
    TrainBatch b = family_batch(c.n_vocab);
    const int64_t n_lab = b.n_labels();
    ASSERT_TRUE(tm->forward(b).ok());
    tm->zero_grad();
    tm->backward(1.0f / static_cast<float>(n_lab));
    const std::vector<float> g_lora = tm->grads();
    const std::vector<float> theta = tm->lora().values;
    // W' = W + s·B·A: dA = s·Bᵀ·dW', dB = s·dW'·Aᵀ, dW' from full fine-tuning of the merged model.
    tm->merge_lora_into_base();
    auto full = make_model(c, tm->base().to_tensors(io::DType::F32), LoraOptions{});
    ASSERT_TRUE(full->forward(b).ok());
    full->zero_grad();
    full->backward(1.0f / static_cast<float>(n_lab));
    const float s = lo.scale();
    const int r = lo.rank;
    // Both gradients' rounding (the LoRA model's, and the merged model's with the fp32 merge's r + 1 on
    // every chain) and the chain product's (testing::ChainRuleCheck).
    size_t longest = 0;
    for (const TrainSequence& sq : b.seqs) longest = std::max(longest, sq.size());
    const int64_t n_rows = b.n_tokens(), max_rows = static_cast<int64_t>(longest);
    testing::ChainRuleCheck check;
    check.gamma_lora =
        testing::backward_order_gamma(c, {.n_rows = n_rows, .max_rows = max_rows, .lora_rank = r});
    check.gamma_full =
        testing::backward_order_gamma(c, {.n_rows = n_rows, .max_rows = max_rows, .extra = r + 1});
    int adapters = 0;
    for (const ParamTensor& pt : tm->lora().tensors) {
      if (pt.name.find("lora_A") == std::string::npos) continue;
      const std::string stem = pt.name.substr(0, pt.name.find(".lora_A"));
      const ParamTensor* pb = tm->lora().find(stem + ".lora_B.weight");
      const auto [pw, row0] = base_of(full->base(), c, stem);
      ASSERT_TRUE(pb && pw) << stem;
      const int64_t out = pb->shape[0], in = pw->shape[1];
      const float* A = theta.data() + pt.offset;
      const float* B = theta.data() + pb->offset;
      const float* dW = full->grads().data() + pw->offset + row0 * in;
      check.add(A, B, dW, out, in, r, s, g_lora.data() + pt.offset, g_lora.data() + pb->offset);
      ++adapters;
    }
    EXPECT_EQ(adapters, 7 * c.n_layer);
    EXPECT_LE(check.ratio, 1.0) << "largest error " << check.worst << " (bound " << check.worst_bound << ")";
  }
}

}  // namespace
}  // namespace gpstream::train
