// TrainModel: forward logits equal model::Transformer's on the same layout; whole-model gradients
// against finite differences of an independent double-precision reference (full fine-tuning) and of the
// model itself (LoRA); gradients against the PyTorch float64 autograd fixtures in tests/train/data.
#include "train/train_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "../testing/forward_bounds.h"
#include "../testing/scoped_env.h"
#include "io/safetensors.h"
#include "model/kv_cache.h"
#include "train_test_util.h"

namespace gpstream::train {
namespace {

using testing::CentralDifference;
using testing::group_sequence;

TrainBatch two_group_sequences(int n_vocab, float phi) {
  TrainBatch b;
  b.seqs.push_back(group_sequence(1, n_vocab, phi));
  b.seqs.push_back(group_sequence(2, n_vocab, phi));
  // A causal batch-mode sequence too (all source, consecutive positions, every row labelled).
  TrainSequence s;
  for (int i = 0; i < 9; ++i)
    s.push((i * 37 + 5) % n_vocab, static_cast<float>(i), 0, i + 1, 0, (i * 11 + 3) % n_vocab);
  b.seqs.push_back(s);
  return b;
}

std::unique_ptr<TrainModel> make_model(const model::ModelConfig& c, const io::TensorMap& t,
                                       const LoraOptions& lora, int threads = 2) {
  auto m = TrainModel::create(c, t, lora, 7, TrainShape{64, 32}, threads);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return std::move(m).value();
}

TEST(TrainModel, RefusesWhatDoesNotFitInTheMemoryBudget) {
  const auto c = testing::tiny_config(false, true, false);
  const io::TensorMap t = model::random_tensors(c, testing::tiny_init(3));
  {  // Below the fp32 weights alone (a lower bound of the need, computed from the tensors themselves).
    uint64_t weight_bytes = 0;
    for (const auto& [name, data] : t.tensors) weight_bytes += static_cast<uint64_t>(data.numel()) * 4;
    testing::ScopedEnv limit("GPSTREAM_MEMORY_LIMIT", std::to_string(weight_bytes - 1).c_str());
    auto m = TrainModel::create(c, t, LoraOptions{}, 7, TrainShape{64, 32}, 1);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), ErrorCode::OutOfRange);
    EXPECT_NE(m.error().message().find("training this model"), std::string::npos) << m.error().message();
  }
  {
    testing::ScopedEnv limit("GPSTREAM_MEMORY_LIMIT", "1G");
    EXPECT_TRUE(TrainModel::create(c, t, LoraOptions{}, 7, TrainShape{64, 32}, 1).ok());
  }
  // Absurd declared sizes (a hostile config) are refused before any allocation, under the real budget.
  model::ModelConfig huge = c;
  huge.n_embd = huge.n_ff = 1 << 20;
  huge.n_head = huge.n_head_kv = 1;
  huge.head_dim = 1 << 20;
  huge.n_vocab = 1 << 24;
  huge.n_layer = 1000;
  auto m = TrainModel::create(huge, io::TensorMap{}, LoraOptions{}, 7, TrainShape{64, 32}, 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code(), ErrorCode::OutOfRange) << m.error().message();
}

TEST(TrainModel, LogitsEqualInferenceForward) {
  for (bool qwen2 : {false, true}) {
    const auto c = testing::tiny_config(qwen2, /*tied=*/qwen2, /*llama3_rope=*/!qwen2);
    const io::TensorMap t = model::random_tensors(c, testing::tiny_init(3));
    auto tm = make_model(c, t, LoraOptions{});
    auto inf = testing::tiny_transformer(c, t);
    TrainBatch b = two_group_sequences(c.n_vocab, 0.5f);
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
    EXPECT_EQ(row, tm->n_logit_rows());
  }
}

// The central difference of f(t) = loss(θ + t·e) over t ∈ {0, ±1, ±2} (e on [offset, offset + e.size()),
// each evaluation within eval_error of the exact loss) against ĝ·e, the fp32 gradient's prediction of
// f'(0) summed in double. bound(): how far they may be apart, the difference's error, the gradient's
// rounding projected on e (gradient_projection_bound), and the double sum's γ_n(u₆₄) Σ|ĝ_i e_i|.
struct DirectionalCheck {
  CentralDifference fd;
  double predicted = 0, projected = 0, sum_error = 0;
  double bound() const { return fd.error + projected + sum_error; }
  double diff() const { return std::abs(fd.slope - predicted); }
};

DirectionalCheck directional(const std::vector<float>& theta, size_t offset, const std::vector<float>& e,
                             const float* grad, double gamma, double eval_error,
                             const std::function<double(const std::vector<float>&)>& loss) {
  const std::array<double, 5> t{-2, -1, 0, 1, 2};
  std::array<double, 5> fv{};
  std::vector<float> p(theta);
  for (size_t k = 0; k < t.size(); ++k) {
    for (size_t i = 0; i < e.size(); ++i)
      p[offset + i] = static_cast<float>(double(theta[offset + i]) + t[k] * e[i]);  // exact (exact_step)
    fv[k] = loss(p);
  }
  DirectionalCheck r;
  r.fd = testing::central_difference(t, fv, eval_error);
  double abs_sum = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    r.predicted += double(grad[i]) * e[i];
    abs_sum += std::abs(double(grad[i]) * e[i]);
  }
  r.projected = testing::gradient_projection_bound(gamma, {grad, e.size()}, e);
  r.sum_error = testing::gamma_n(static_cast<int64_t>(e.size()), testing::kUnitF64) * abs_sum;
  return r;
}

// Two directions for each tensor: along its computed gradient (f'(0) = Σ g_i ĝ_i, which a gradient scaled by
// a factor or missing a term correlated with it moves by that fraction of ‖ĝ‖², while the bound is
// γ·max|ĝ|·Σ|ĝ_i|: a few γ of it) and along seeded Gaussian noise (which also sees a gradient that is wrong
// in a direction orthogonal to itself, e.g. zero).
std::array<std::vector<float>, 2> tensor_steps(const std::vector<float>& theta, const ParamTensor& pt,
                                               const float* grad, uint64_t seed, double h) {
  std::vector<double> along(pt.numel), noise(pt.numel);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (size_t i = 0; i < pt.numel; ++i) along[i] = grad[i], noise[i] = nd(rng);
  const std::span<const float> at = std::span<const float>(theta).subspan(pt.offset);
  return {testing::exact_fd_step(at, along, h), testing::exact_fd_step(at, noise, h)};
}

// The longest sequence of a batch: the most rows one row attends to.
int64_t longest(const TrainBatch& b) {
  size_t m = 0;
  for (const TrainSequence& s : b.seqs) m = std::max(m, s.size());
  return static_cast<int64_t>(m);
}

// testing::reference_loss runs the same operations in double: forward_order_bound's loss bound against an
// exact reference with u₆₄ for u (first order, every γ_n ∝ u).
double reference_eval_error(const model::ModelConfig& c, const model::Weights& w, const TrainBatch& b) {
  return testing::forward_order_bound(c, w, {.against_reference = true, .max_rows = longest(b)}).loss *
         (testing::kUnitF64 / testing::kUnitF32);
}

TEST(TrainModel, FullGradientMatchesReferenceFiniteDifferences) {
  for (bool qwen2 : {false, true}) {
    const auto c = testing::tiny_config(qwen2, /*tied=*/qwen2, /*llama3_rope=*/!qwen2);
    const io::TensorMap t = model::random_tensors(c, testing::tiny_init(5));
    auto tm = make_model(c, t, LoraOptions{});
    TrainBatch b = two_group_sequences(c.n_vocab, 0.5f);
    auto loss_sum = tm->forward(b);
    ASSERT_TRUE(loss_sum.ok());
    const int64_t n_lab = b.n_labels();
    const double ref0 = testing::reference_loss(c, tm->base().to_tensors(io::DType::F32), b);
    // fp32 training forward against the double reference: forward_order_bound's loss bound.
    const auto inf = testing::tiny_transformer(c, t);
    const double loss_tol =
        testing::forward_order_bound(c, inf->weights(), {.against_reference = true, .max_rows = b.n_tokens()})
            .loss;
    EXPECT_NEAR(*loss_sum / static_cast<double>(n_lab), ref0, loss_tol);
    tm->zero_grad();
    tm->backward(1.0f / static_cast<float>(n_lab));
    ParamSet probe = tm->base();
    auto loss = [&](const std::vector<float>& v) {
      probe.values = v;
      return testing::reference_loss(c, probe.to_tensors(io::DType::F32), b);
    };
    // Per tensor: the double reference's difference quotient (steps of at most 1e-4, exact fp32 points)
    // against the fp32 backward's gradient, within the difference's own bound and the backward's rounding.
    const double gamma = testing::backward_order_gamma(c, {.n_rows = b.n_tokens(), .max_rows = longest(b)});
    const double eval_error = reference_eval_error(c, inf->weights(), b);
    const std::vector<float> theta = tm->base().values;
    uint64_t seed = 100;
    for (const ParamTensor& pt : tm->base().tensors) {
      const float* g = tm->grads().data() + pt.offset;
      for (const auto& e : tensor_steps(theta, pt, g, seed++, 1e-4)) {
        const DirectionalCheck r = directional(theta, pt.offset, e, g, gamma, eval_error, loss);
        EXPECT_LE(r.diff(), r.bound()) << (qwen2 ? "qwen2 " : "llama3 ") << pt.name << ": slope "
                                       << r.fd.slope << " predicted " << r.predicted;
      }
    }
  }
}

TEST(TrainModel, LoraGradientMatchesFiniteDifferencesAndChainRule) {
  const auto c = testing::tiny_config(false, false, false);
  const io::TensorMap t = model::random_tensors(c, testing::tiny_init(9));
  LoraOptions lo;
  lo.rank = 4;
  lo.alpha = 8.0f;
  auto tm = make_model(c, t, lo);
  // B starts at zero in PEFT; make it non-zero so d/dA is exercised.
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.0f, 0.2f);
  for (float& v : tm->lora().values) v += nd(rng);
  TrainBatch b = two_group_sequences(c.n_vocab, 0.5f);
  const int64_t n_lab = b.n_labels();
  ASSERT_TRUE(tm->forward(b).ok());
  tm->zero_grad();
  tm->backward(1.0f / static_cast<float>(n_lab));
  const std::vector<float> g_lora = tm->grads();
  const std::vector<float> theta = tm->lora().values;
  const ParamSet base = tm->base();
  // The base tensor an adapter (by its lora_A / lora_B name) adapts, in a model's base ParamSet.
  auto target = [](const ParamSet& ps, const std::string& name) {
    const std::string stem = name.substr(0, name.find(".lora_"));
    return ps.find(stem.substr(std::string("base_model.model.").size()) + ".weight");
  };
  // Full fine-tuning of the merged model W' = W + s·B·A (merged in fp32, sgemm: each W'_oj within
  // γ_{r+1}(|W_oj| + s Σ_i |B_oi A_ij|) of the exact sum, one more dot of length r + 1 on every chain).
  tm->merge_lora_into_base();
  auto full = make_model(c, tm->base().to_tensors(io::DType::F32), LoraOptions{});
  ASSERT_TRUE(full->forward(b).ok());
  full->zero_grad();
  full->backward(1.0f / static_cast<float>(n_lab));
  const auto merged = testing::tiny_transformer(c, tm->base().to_tensors(io::DType::F32));
  const int64_t n_rows = b.n_tokens(), max_rows = longest(b);

  // 1. Central differences along each adapter tensor of the independent double reference on the merged
  //    weights W + s·B·A, merged in double and stored as fp32. That rounding moves each merged entry by
  //    ≤ u|W'_oj| and the loss by ≤ u Σ_oj |∂L/∂W'_oj||W'_oj| (first order; ∂L/∂W' from the full model's
  //    fp32 gradient, itself within γ of it): an evaluation error, over the one block the tensor's step
  //    moves (the other blocks round to the same fp32 values at every point: a constant shift of L that
  //    every difference cancels, and a change of the function of u relative, one more rounding on every
  //    chain of the LoRA gradient).
  auto loss = [&](const std::vector<float>& v) {
    ParamSet m = base;
    for (const ParamTensor& pt : tm->lora().tensors) {
      if (pt.name.find("lora_A") == std::string::npos) continue;
      const std::string stem = pt.name.substr(0, pt.name.find(".lora_A"));
      const ParamTensor* pb = tm->lora().find(stem + ".lora_B.weight");
      const ParamTensor* pw = target(m, pt.name);
      const int64_t out = pw->shape[0], in = pw->shape[1], r = lo.rank;
      for (int64_t o = 0; o < out; ++o)
        for (int64_t j = 0; j < in; ++j) {
          double d = 0;
          for (int64_t i = 0; i < r; ++i) d += double(v[pb->offset + o * r + i]) * v[pt.offset + i * in + j];
          float& w = m.values[pw->offset + static_cast<size_t>(o * in + j)];
          w = static_cast<float>(w + lo.scale() * d);
        }
    }
    return testing::reference_loss(c, m.to_tensors(io::DType::F32), b);
  };
  const double gamma_fd = testing::backward_order_gamma(
      c, {.n_rows = n_rows, .max_rows = max_rows, .lora_rank = lo.rank, .extra = 1});
  const double ref_error = reference_eval_error(c, merged->weights(), b);
  uint64_t seed = 200;
  for (const ParamTensor& pt : tm->lora().tensors) {
    const ParamTensor* pw = target(full->base(), pt.name);
    ASSERT_NE(pw, nullptr) << pt.name;
    double merge_error = 0;
    for (size_t i = 0; i < pw->numel; ++i)
      merge_error += testing::kUnitF32 *
                     std::abs(double(full->grads()[pw->offset + i]) * full->base().values[pw->offset + i]);
    const float* g = g_lora.data() + pt.offset;
    for (const auto& e : tensor_steps(theta, pt, g, seed++, 3e-4)) {
      const DirectionalCheck r = directional(theta, pt.offset, e, g, gamma_fd, ref_error + merge_error, loss);
      EXPECT_LE(r.diff(), r.bound()) << pt.name << ": slope " << r.fd.slope << " predicted " << r.predicted;
    }
  }

  // 2. Chain rule: dA = s·Bᵀ·dW' and dB = s·dW'·Aᵀ, with dW' from full fine-tuning of the merged model
  //    (itself checked by finite differences above): both gradients' rounding, the LoRA model's and the
  //    merged model's (with the merge's r + 1), and the chain product's (testing::ChainRuleCheck).
  const float s = lo.scale();
  const int r = lo.rank;
  testing::ChainRuleCheck check;
  check.gamma_lora =
      testing::backward_order_gamma(c, {.n_rows = n_rows, .max_rows = max_rows, .lora_rank = r});
  check.gamma_full =
      testing::backward_order_gamma(c, {.n_rows = n_rows, .max_rows = max_rows, .extra = r + 1});
  for (const ParamTensor& pt : tm->lora().tensors) {
    if (pt.name.find("lora_A") == std::string::npos) continue;
    std::string stem = pt.name.substr(0, pt.name.find(".lora_A"));
    const ParamTensor* pb = tm->lora().find(stem + ".lora_B.weight");
    const ParamTensor* pw = target(full->base(), pt.name);
    ASSERT_TRUE(pb && pw) << stem;
    const int64_t out = pw->shape[0], in = pw->shape[1];
    const float* A = theta.data() + pt.offset;
    const float* B = theta.data() + pb->offset;
    const float* dW = full->grads().data() + pw->offset;
    check.add(A, B, dW, out, in, r, s, g_lora.data() + pt.offset, g_lora.data() + pb->offset);
  }
  EXPECT_LE(check.ratio, 1.0) << "largest error " << check.worst << " (bound " << check.worst_bound << ")";
}

// Input embedding rows (speech): a row whose input is a given vector behaves exactly like a token whose
// embedding-table row is that vector, so the input gradient is checked against finite differences of the
// double reference with those table rows moved (ids unique to the rows, untied embeddings), in full and
// LoRA mode; the forward loss equals the id-only forward's.
TEST(TrainModel, InputRowGradientMatchesReferenceFiniteDifferences) {
  const auto c = testing::tiny_config(false, /*tied=*/false, false);
  const io::TensorMap t = model::random_tensors(c, testing::tiny_init(13));
  const int n_in = 4;
  TrainBatch by_id;
  by_id.seqs.push_back(group_sequence(3, c.n_vocab - n_in, 0.0f));
  TrainSequence& s = by_id.seqs[0];
  for (int r = 0; r < n_in; ++r) s.ids[static_cast<size_t>(2 + r)] = c.n_vocab - n_in + r;  // unique ids
  const auto inf = testing::tiny_transformer(c, t);
  for (LoraOptions lo : {LoraOptions{}, LoraOptions{4, 8.0f, 0.0f}}) {
    auto tm = make_model(c, t, lo);
    const ParamTensor* emb = tm->base().find("model.embed_tokens.weight");
    ASSERT_NE(emb, nullptr);
    TrainBatch by_input = by_id;
    TrainSequence& si = by_input.seqs[0];
    si.input_row.assign(si.size(), -1);
    for (int r = 0; r < n_in; ++r) {
      const int row = 2 + r;
      si.input_row[static_cast<size_t>(row)] = (r + 1) % n_in;  // rows of `inputs` in another order
      si.ids[static_cast<size_t>(row)] = -1;
    }
    si.inputs.resize(static_cast<size_t>(n_in * c.n_embd));
    for (int r = 0; r < n_in; ++r)
      std::copy_n(
          tm->base().values.data() + emb->offset + static_cast<size_t>(c.n_vocab - n_in + r) * c.n_embd,
          c.n_embd, si.inputs.data() + static_cast<size_t>((r + 1) % n_in) * c.n_embd);
    const double l_id = *tm->forward(by_id, ForwardOptions{false, false, 0});
    auto l_in = tm->forward(by_input, ForwardOptions{false, false, 0});
    ASSERT_TRUE(l_in.ok()) << l_in.error().message();
    EXPECT_EQ(*l_in, l_id);
    const int64_t n_lab = by_input.n_labels();
    tm->zero_grad();
    tm->backward(1.0f / static_cast<float>(n_lab));
    const std::vector<float>& g = tm->input_grad(0);
    ASSERT_EQ(g.size(), si.inputs.size());
    double gmax = 0;
    for (float v : g) gmax = std::max(gmax, double(std::abs(v)));
    EXPECT_GT(gmax, 0.0);
    ParamSet probe = tm->base();
    auto loss = [&](const std::vector<float>& inputs) {
      probe.values = tm->base().values;
      for (int r = 0; r < n_in; ++r)
        std::copy_n(inputs.data() + static_cast<size_t>((r + 1) % n_in) * c.n_embd, c.n_embd,
                    probe.values.data() + emb->offset + static_cast<size_t>(c.n_vocab - n_in + r) * c.n_embd);
      return testing::reference_loss(c, probe.to_tensors(io::DType::F32), by_id);
    };
    // The input rows as one tensor: central differences of the double reference along them against the
    // fp32 backward's input gradient (the last dot: the rows' backward signal, no sum over rows).
    const double gamma = testing::backward_order_gamma(
        c, {.n_rows = by_id.n_tokens(), .max_rows = longest(by_id), .lora_rank = lo.rank});
    const double eval_error = reference_eval_error(c, inf->weights(), by_id);
    ParamTensor rows;
    rows.numel = si.inputs.size();
    for (const auto& e :
         tensor_steps(si.inputs, rows, g.data(), 300 + static_cast<uint64_t>(lo.rank), 1e-4)) {
      const DirectionalCheck r = directional(si.inputs, 0, e, g.data(), gamma, eval_error, loss);
      EXPECT_LE(r.diff(), r.bound()) << (lo.rank ? "lora" : "full") << ": slope " << r.fd.slope
                                     << " predicted " << r.predicted;
    }
  }
}

TEST(TrainModel, RefusesBadInputRows) {
  const auto c = testing::tiny_config(false, false, false);
  auto tm = make_model(c, model::random_tensors(c, testing::tiny_init(1)), LoraOptions{});
  TrainBatch b;
  b.seqs.push_back(group_sequence(1, c.n_vocab, 0.0f));
  TrainSequence& s = b.seqs[0];
  s.input_row.assign(s.size(), -1);
  s.input_row[1] = 0;
  EXPECT_FALSE(tm->forward(b).ok());  // no inputs buffer
  s.inputs.assign(static_cast<size_t>(c.n_embd) - 1, 0.5f);
  EXPECT_FALSE(tm->forward(b).ok());  // not whole rows
  s.inputs.assign(static_cast<size_t>(c.n_embd), 0.5f);
  EXPECT_TRUE(tm->forward(b).ok());
  s.inputs[3] = std::nanf("");
  EXPECT_FALSE(tm->forward(b).ok());
  s.inputs[3] = 0.5f;
  s.input_row.pop_back();
  EXPECT_FALSE(tm->forward(b).ok());  // one entry per row
}

TEST(TrainModel, LoraDropoutIsDeterministicAndOffAtEval) {
  const auto c = testing::tiny_config(false, false, false);
  const io::TensorMap t = model::random_tensors(c, testing::tiny_init(9));
  LoraOptions lo;
  lo.rank = 2;
  lo.dropout = 0.3f;
  auto tm = make_model(c, t, lo);
  for (float& v : tm->lora().values) v += 0.1f;
  TrainBatch b = two_group_sequences(c.n_vocab, 0.0f);
  ForwardOptions a, e;
  a.dropout_seed = 1;
  e.training = false;
  const double l1 = *tm->forward(b, a), l2 = *tm->forward(b, a), l3 = *tm->forward(b, e);
  a.dropout_seed = 2;
  const double l4 = *tm->forward(b, a);
  EXPECT_EQ(l1, l2);
  EXPECT_NE(l1, l3);
  EXPECT_NE(l1, l4);
}

TEST(TrainModel, RefusesBadBatches) {
  const auto c = testing::tiny_config(false, false, false);
  auto tm = make_model(c, model::random_tensors(c, testing::tiny_init(1)), LoraOptions{});
  TrainBatch b;
  b.seqs.push_back(group_sequence(1, c.n_vocab, 0.0f));
  b.seqs[0].ids[3] = c.n_vocab;
  EXPECT_FALSE(tm->forward(b).ok());
  b.seqs[0] = group_sequence(1, c.n_vocab, 0.0f);
  b.seqs[0].n_src[2] = 99;
  EXPECT_FALSE(tm->forward(b).ok());
  TrainBatch big;
  for (int i = 0; i < 5; ++i) big.seqs.push_back(group_sequence(1, c.n_vocab, 0.0f));
  auto r = tm->forward(big);  // 75 tokens > 64 planned
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("planned"), std::string::npos);
}

// Gradients against the PyTorch float64 autograd fixtures (scripts/make-model-fixtures), stored as fp32.
TEST(TrainModel, GradientsMatchPyTorchFixtures) {
  for (const char* name :
       {"grad_llama3_untied_f32", "grad_qwen2_tied_f32", "grad_gemma2_tied_f32", "grad_phi3_longrope_f32"}) {
    const std::string dir = std::string(GPSTREAM_SOURCE_DIR) + "/tests/train/data/" + name;
    std::ifstream in(dir + "/inputs.json");
    ASSERT_TRUE(in) << dir;
    nlohmann::json j = nlohmann::json::parse(in);
    const std::string model_dir = dir + "/" + j["model"].get<std::string>();
    auto cfg = model::load_hf_config(model_dir);
    ASSERT_TRUE(cfg.ok());
    auto tensors = io::read_safetensors_dir(model_dir);
    ASSERT_TRUE(tensors.ok());
    TrainBatch b;
    for (const auto& s : j["sequences"]) {
      TrainSequence ts;
      const std::string groups = s["groups"];
      for (size_t i = 0; i < groups.size(); ++i)
        ts.push(s["ids"][i], s["positions"][i], groups[i] == 't', s["n_src"][i], s["n_tgt"][i],
                s["labels"][i]);
      b.seqs.push_back(ts);
    }
    auto tm = TrainModel::create(*cfg, *tensors, LoraOptions{}, 0, TrainShape{64, 32}, 2);
    ASSERT_TRUE(tm.ok()) << tm.error().message();
    auto sum = (*tm)->forward(b);
    ASSERT_TRUE(sum.ok());
    const double n_lab = static_cast<double>(b.n_labels());
    // fp32 training forward against PyTorch in float64: forward_order_bound's loss bound.
    auto w = model::weights_from_tensors(*cfg, *tensors);
    ASSERT_TRUE(w.ok());
    const double loss_tol =
        testing::forward_order_bound(*cfg, *w, {.against_reference = true, .max_rows = b.n_tokens()}).loss;
    EXPECT_NEAR(*sum / n_lab, j["loss"].get<double>(), loss_tol) << name;
    (*tm)->zero_grad();
    (*tm)->backward(static_cast<float>(1.0 / n_lab));
    io::TensorMap ref;
    ASSERT_TRUE(io::read_safetensors(dir + "/grads.safetensors", ref).ok());
    // The fixture is float64 autograd on the stored fp32 weights, rounded once to fp32 when written
    // (scripts/make-model-fixtures: batch_loss_and_grads on float64 W, .astype(np.float32)): per entry
    // the fp32 backward's rounding, γ·max|g| of its tensor (backward_order_gamma, gradient_magnitude;
    // max|g| from the fixture's own values), the float64 backward's, the same γ index with u₆₄, and the
    // storage rounding u·|g_i|.
    const testing::BackwardBoundOptions bo{.n_rows = b.n_tokens(), .max_rows = longest(b)};
    const double gamma = testing::backward_order_gamma(*cfg, bo) +
                         testing::gamma_n(testing::backward_order_length(*cfg, bo), testing::kUnitF64);
    int checked = 0;
    for (const ParamTensor& pt : (*tm)->base().tensors) {
      const io::TensorData* g = ref.find(pt.name);
      ASSERT_NE(g, nullptr) << pt.name;
      std::vector<float> want = io::tensor_to_f32(*g);
      ASSERT_EQ(want.size(), pt.numel);
      const double gmax = testing::gradient_magnitude(want);
      for (size_t i = 0; i < pt.numel; ++i)
        ASSERT_NEAR((*tm)->grads()[pt.offset + i], want[i],
                    gamma * gmax + testing::kUnitF32 * std::abs(want[i]))
            << name << " " << pt.name << "[" << i << "]";
      ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(ref.tensors.size()));
  }
}

}  // namespace
}  // namespace gpstream::train

namespace gpstream::train {
namespace {

// attention_probabilities against the double-precision reference forward's
// (tests/model/reference_transformer.h, independent of src/train and src/kernels), over every pair of rows —
// the source and target rows a row sees and the zeros of those it does not — within forward_order_bound's
// per-layer attention bound for one fp32 forward against the reference.
TEST(TrainModel, AttentionProbabilitiesEqualTheReference) {
  const auto c = testing::tiny_config(true, true, false);
  const io::TensorMap t = model::random_tensors(c, testing::tiny_init(5));
  auto tm = make_model(c, t, LoraOptions{});
  TrainBatch b;
  b.seqs.push_back(group_sequence(3, c.n_vocab, 0.5f));
  b.seqs.push_back(group_sequence(4, c.n_vocab, 0.0f));
  ForwardOptions fo;
  fo.training = false;
  ASSERT_TRUE(tm->forward(b, fo).ok());
  auto inf = testing::tiny_transformer(c, t);
  for (size_t s = 0; s < b.seqs.size(); ++s) {
    const TrainSequence& seq = b.seqs[s];
    std::vector<testing::RefToken> rt;
    for (size_t i = 0; i < seq.size(); ++i) rt.push_back({seq.ids[i], seq.positions[i]});
    testing::RefAttention want;
    testing::reference_forward(c, t, rt, testing::dense_mask(seq), &want);
    const testing::ForwardOrderBound bound = testing::forward_order_bound(
        c, inf->weights(), {.against_reference = true, .max_rows = static_cast<int64_t>(seq.size())});
    const auto T = static_cast<int64_t>(seq.size());
    for (int l = 0; l < c.n_layer; ++l) {
      const std::vector<float> got = tm->attention_probabilities(s, l);
      ASSERT_EQ(got.size(), static_cast<size_t>(c.n_head * T * T));
      for (int h = 0; h < c.n_head; ++h)
        for (int64_t i = 0; i < T; ++i)
          for (int64_t j = 0; j < T; ++j)
            ASSERT_NEAR(got[static_cast<size_t>((h * T + i) * T + j)], want[l][h][i][j], bound.attention[l])
                << "sequence " << s << " layer " << l << " head " << h << " row " << i << " key " << j;
    }
  }
}

}  // namespace
}  // namespace gpstream::train
