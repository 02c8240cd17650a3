// Load-time repacking of weights (model/weight_repack.h): which Q8_0 / Q4_0 matrices are interleaved (layer
// matrices and the head in whole groups of eight rows; never the embedding table: a head tied to it as a
// copy) and which BF16 matrices go into panels of sixteen rows (layer matrices and the head, a tied head as a
// copy that leaves the embedding table as it was), and a repacked model gives the logits of the same model
// unrepacked (GPSTREAM_REPACK=0) up to fp32 summation order, built in memory (storage shared: nothing
// released) and loaded from a GGUF file (storage unshared: the replaced pages are handed back, and everything
// still read must survive that).
#include "model/weight_repack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include "../testing/forward_bounds.h"
#include "../testing/scoped_env.h"
#include "../testing/temp_dir.h"
#include "gguf_test_util.h"
#include "kernels/quant_blocks.h"
#include "model/quantize_model.h"
#include "model/tensor_names.h"
#include "model/transformer.h"
#include "tiny_models.h"

namespace gpstream {
namespace {

using testing::causal_logits;
using testing::ScopedEnv;
using testing::TempDir;

const std::vector<int> kIds = {3, 95, 0, 41, 7, 7, 58, 12, 1, 88};  // the GEMM and the matvec regimes

// A Q4_0 model whose dimensions are all whole groups of eight rows (vocab 96), so a tied head would qualify
// by shape; the embedding table and an untied head Q8_0 (as convert_model_tensors stores them), or with
// q4_vocab Q4_0 too.
io::TensorMap q4_model(const model::ModelConfig& c, bool q4_vocab) {
  const io::TensorMap f32 = model::random_tensors(c, testing::tiny_init(11));
  io::TensorMap stored = model::convert_model_tensors(c, f32, io::DType::Q4_0);
  if (!q4_vocab) return stored;
  for (model::TensorId id : {model::TensorId::TokEmbd, model::TensorId::Output}) {
    const std::string name = model::hf_name(id);
    if (!f32.find(name)) continue;  // tied: no separate head
    const std::vector<float> e = io::tensor_to_f32(*f32.find(name));
    std::vector<std::byte> bytes(static_cast<size_t>(c.n_vocab) * (c.n_embd / 32) * kernels::kQ4_0Bytes);
    kernels::quantize_row_q4_0(e.data(), reinterpret_cast<kernels::BlockQ4_0*>(bytes.data()),
                               c.n_vocab * c.n_embd);
    stored.add_raw(name, io::DType::Q4_0, {c.n_vocab, c.n_embd}, std::move(bytes));
  }
  return stored;
}

// Every logit of `got` within `bound` of `want`.
void expect_within(const std::vector<float>& got, const std::vector<float>& want, double bound) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), bound) << "logit " << i;
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
  }
  std::cout << "[ max |diff| ] " << worst << " (bound " << bound << ")\n";
}

// Repacked and plain Q8_0 / Q4_0 matrices are not summed alike: the interleaved kernel adds each block's
// whole int32 sum with one FMA per block, the plain ones per lane (two halves of a block, or eight lanes,
// summed at the end), so their fp32 roundings differ and the logits are not bit-identical. Everything else
// (activation quantization, norms, attention) is the same code on both sides. quantized_logit_bound
// (testing/fp_bounds.h): with the head input quantized alike, the head's summation order; and where an
// activation rounding flipped anywhere, one Q8_0 step on every element of the head input.
double quantized_bound(const model::ModelConfig& c, const model::Weights& w) {
  const testing::QuantizedLogitBound b =
      testing::quantized_logit_bound(w.output, w.output_norm, c.norm_weight_offset);
  return b.order + b.flips;
}

// qwen2?, tied, Q4_0 embedding and head
using Case = std::tuple<bool, bool, bool>;
class WeightRepack : public ::testing::TestWithParam<Case> {};

TEST_P(WeightRepack, InMemoryModelGivesUnrepackedLogits) {
  const auto [qwen2, tied, q4_vocab] = GetParam();
  model::ModelConfig c = testing::tiny_config(qwen2, tied, false);
  c.n_vocab = 96;
  c.n_ff = 64;
  const io::TensorMap stored = q4_model(c, q4_vocab);
  std::vector<float> plain;
  {
    ScopedEnv off("GPSTREAM_REPACK", "0");
    auto tf = testing::tiny_transformer(c, stored, 2);
    EXPECT_EQ(tf->weights().layers[0].w_up.layout, kernels::RowLayout::Plain);
    plain = causal_logits(*tf, kIds);
  }
  auto tf = testing::tiny_transformer(c, stored, 2);
  const model::Weights& w = tf->weights();
  for (const auto& L : w.layers)
    for (const kernels::MatrixView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      EXPECT_EQ(m->layout, kernels::RowLayout::Interleaved8);
  EXPECT_EQ(w.tok_embd.layout, kernels::RowLayout::Plain);
  // The head is repacked; tied, as a copy (the lookups, which the logits check, still read the plain table).
  EXPECT_EQ(w.output.layout, kernels::RowLayout::Interleaved8);
  EXPECT_NE(w.output.data, w.tok_embd.data);
  expect_within(causal_logits(*tf, kIds), plain, quantized_bound(c, w));
  // Fed the same weights again, nothing more qualifies.
  model::Weights again;
  again.layers = w.layers;
  again.tok_embd = w.tok_embd;
  again.output = w.output;
  EXPECT_EQ(model::repack_weights_for_kernels(again), 0);
}

TEST_P(WeightRepack, LoadedModelGivesUnrepackedLogits) {
  const auto [qwen2, tied, q4_vocab] = GetParam();
  model::ModelConfig c = testing::tiny_config(qwen2, tied, false);
  c.n_vocab = 96;
  c.n_ff = 64;
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(testing::write_model_gguf(c, q4_model(c, q4_vocab), io::DType::Q4_0, path).ok());
  std::vector<float> plain;
  {
    ScopedEnv off("GPSTREAM_REPACK", "0");
    auto tf = model::Transformer::load(path, 2);
    ASSERT_TRUE(tf.ok()) << tf.error().message();
    plain = causal_logits(**tf, kIds);
  }
  for (const char* mmap : {"0", "1"}) {  // resident copy and file mapping
    ScopedEnv residency("GPSTREAM_MMAP", mmap);
    auto tf = model::Transformer::load(path, 2);
    ASSERT_TRUE(tf.ok()) << tf.error().message();
    EXPECT_EQ((*tf)->weights().layers[1].w_down.layout, kernels::RowLayout::Interleaved8);
    expect_within(causal_logits(**tf, kIds), plain, quantized_bound((*tf)->config(), (*tf)->weights()));
  }
}

INSTANTIATE_TEST_SUITE_P(All, WeightRepack,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool()));

// qwen2?, tied. Paneled BF16 rows are summed by the panel kernel (one fp32 FMA per column, in order), plain
// ones by the few-token kernel or sgemm (OpenBLAS's per-CPU blocking): other orders of the same products, all
// else the same code, so the logits lie within forward_order_bound for two fp32 forwards
// (testing/forward_bounds.h).
using Bf16Case = std::tuple<bool, bool>;
class Bf16Repack : public ::testing::TestWithParam<Bf16Case> {};

// A BF16 model whose matrices are all whole panels of sixteen rows (vocab 96, n_ff 48, q 32, k/v 16 rows).
model::ModelConfig bf16_config(bool qwen2, bool tied) {
  model::ModelConfig c = testing::tiny_config(qwen2, tied, false);
  c.n_vocab = 96;
  return c;
}

TEST_P(Bf16Repack, InMemoryModelGivesUnrepackedLogits) {
  const auto [qwen2, tied] = GetParam();
  const model::ModelConfig c = bf16_config(qwen2, tied);
  const io::TensorMap stored = model::random_tensors(c, testing::tiny_init(5, io::DType::BF16));
  std::vector<float> plain;
  {
    ScopedEnv off("GPSTREAM_REPACK", "0");
    auto tf = testing::tiny_transformer(c, stored, 2);
    EXPECT_EQ(tf->weights().layers[0].w_up.layout, kernels::RowLayout::Plain);
    plain = causal_logits(*tf, kIds);
  }
  auto tf = testing::tiny_transformer(c, stored, 2);
  const model::Weights& w = tf->weights();
  for (const auto& L : w.layers)
    for (const kernels::MatrixView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      EXPECT_EQ(m->layout, kernels::RowLayout::Paneled16);
  EXPECT_EQ(w.output.layout, kernels::RowLayout::Paneled16);
  // The embedding table keeps its rows (lookups read them); a tied head is a paneled copy of it.
  EXPECT_EQ(w.tok_embd.layout, kernels::RowLayout::Plain);
  EXPECT_NE(w.output.data, w.tok_embd.data);
  const io::TensorData* table = stored.find(model::hf_name(model::TensorId::TokEmbd));
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(std::memcmp(w.tok_embd.data, table->bytes.data(), table->bytes.size()), 0);
  expect_within(causal_logits(*tf, kIds), plain, testing::forward_order_bound(c, w).logits);
}

TEST_P(Bf16Repack, LoadedModelGivesUnrepackedLogits) {
  const auto [qwen2, tied] = GetParam();
  const model::ModelConfig c = bf16_config(qwen2, tied);
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(testing::write_model_gguf(c, model::random_tensors(c, testing::tiny_init(6, io::DType::BF16)),
                                        io::DType::BF16, path)
                  .ok());
  std::vector<float> plain;
  {
    ScopedEnv off("GPSTREAM_REPACK", "0");
    auto tf = model::Transformer::load(path, 2);
    ASSERT_TRUE(tf.ok()) << tf.error().message();
    plain = causal_logits(**tf, kIds);
  }
  for (const char* mmap : {"0", "1"}) {  // resident copy and file mapping
    ScopedEnv residency("GPSTREAM_MMAP", mmap);
    auto tf = model::Transformer::load(path, 2);
    ASSERT_TRUE(tf.ok()) << tf.error().message();
    EXPECT_EQ((*tf)->weights().layers[1].w_down.layout, kernels::RowLayout::Paneled16);
    EXPECT_EQ((*tf)->weights().output.layout, kernels::RowLayout::Paneled16);
    const double bound = testing::forward_order_bound((*tf)->config(), (*tf)->weights()).logits;
    expect_within(causal_logits(**tf, kIds), plain, bound);
  }
}

INSTANTIATE_TEST_SUITE_P(All, Bf16Repack, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

}  // namespace
}  // namespace gpstream
