// Batches whose rows mix token ids and input embedding rows (speech frames): a row given as its id's
// embedding-table row (read from the weight tensors, not through the model) forwards exactly like the id,
// in every family (Gemma 2 scales both); an arbitrary row equals the id of a model whose table holds it;
// mixed batches equal row-by-row decoding with the cache; malformed embedding input is refused.
#include <gtest/gtest.h>

#include <random>

#include "../testing/forward_bounds.h"
#include "model/tensor_names.h"
#include "tiny_models.h"

namespace gpstream {
namespace {

using model::Batch;
using model::Group;
using model::KvCache;

// A group layout: S source rows at 0..S-1, then N target rows at 0.5.. seeing a growing source prefix.
struct Row {
  int32_t id;
  float pos;
  Group group;
  int n_src, n_tgt;
};
std::vector<Row> layout_rows(int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  const int S = 7, N = 5;
  const int src_vis[N] = {3, 4, 6, 7, 7};
  std::vector<Row> v;
  for (int s = 0; s < S; ++s)
    v.push_back({static_cast<int32_t>(rng() % vocab), static_cast<float>(s), Group::Source, s + 1, 0});
  for (int t = 0; t < N; ++t)
    v.push_back({static_cast<int32_t>(rng() % vocab), 0.5f + static_cast<float>(t), Group::Target, src_vis[t],
                 t + 1});
  return v;
}

// Rows in `as_embedding` take `table` row id (or `override_row` when given) as an input embedding row.
Batch make_batch(const std::vector<Row>& rows, const std::vector<bool>& as_embedding,
                 const std::vector<float>& table, int E, const std::vector<float>* override_row = nullptr) {
  Batch b;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (!as_embedding[i]) {
      b.add({.id = r.id, .pos = r.pos, .group = r.group, .n_src = r.n_src, .n_tgt = r.n_tgt, .logits = true});
      continue;
    }
    std::span<const float> input =
        override_row ? std::span<const float>(*override_row)
                     : std::span<const float>(table.data() + static_cast<size_t>(r.id) * E, E);
    EXPECT_GE(
        b.add_embedded(input,
                       {.pos = r.pos, .group = r.group, .n_src = r.n_src, .n_tgt = r.n_tgt, .logits = true}),
        0);
  }
  return b;
}

std::vector<float> embedding_table(const model::ModelConfig& cfg, const io::TensorMap& tensors) {
  const io::TensorData* t = tensors.find(model::hf_name(cfg, model::TensorId::TokEmbd));
  EXPECT_NE(t, nullptr);
  return t ? io::tensor_to_f32(*t) : std::vector<float>{};
}

void expect_caches_equal_exactly(const KvCache& a, const KvCache& b, int n_layer) {
  for (Group g : {Group::Source, Group::Target}) {
    ASSERT_EQ(a.rows(g), b.rows(g));
    const int64_t n = int64_t{a.rows(g)} * a.kv_dim();
    for (int l = 0; l < n_layer; ++l)
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(a.k(l, g)[i], b.k(l, g)[i]) << "layer " << l << " element " << i;
        ASSERT_EQ(a.v(l, g)[i], b.v(l, g)[i]) << "layer " << l << " element " << i;
      }
  }
}

struct Family {
  const char* name;
  model::ModelConfig cfg;
  io::DType dtype;
};
std::vector<Family> families() {
  return {{"llama_tied", testing::tiny_config(false, true, false), io::DType::F32},
          {"qwen2_untied_bf16", testing::tiny_config(true, false, true), io::DType::BF16},
          {"gemma2", testing::tiny_gemma2_config(), io::DType::F32},
          {"phi3", testing::tiny_phi3_config(), io::DType::F16}};
}

TEST(MixedBatch, TableRowsAsEmbeddingsForwardExactlyLikeTheirIds) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.name);
    const auto tensors = model::random_tensors(f.cfg, testing::tiny_init(31, f.dtype));
    auto tf = testing::tiny_transformer(f.cfg, tensors, 2);
    const std::vector<float> table = embedding_table(f.cfg, tensors);
    const auto rows = layout_rows(f.cfg.n_vocab, 3);
    // Mixed within each group and across the batch; and every row an embedding.
    std::vector<bool> mixed(rows.size()), all(rows.size(), true), none(rows.size(), false);
    for (size_t i = 0; i < rows.size(); ++i) mixed[i] = (i % 3 != 1);
    KvCache ref_cache(f.cfg);
    std::vector<float> ref;
    ASSERT_TRUE(tf->forward(make_batch(rows, none, table, f.cfg.n_embd), ref_cache, ref).ok());
    for (const auto* which : {&mixed, &all}) {
      KvCache cache(f.cfg);
      std::vector<float> got;
      const Batch b = make_batch(rows, *which, table, f.cfg.n_embd);
      EXPECT_EQ(b.n_embedding_rows(), static_cast<int>(std::count(which->begin(), which->end(), true)));
      ASSERT_TRUE(tf->forward(b, cache, got).ok());
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(got[i], ref[i]) << "logit " << i;
      expect_caches_equal_exactly(cache, ref_cache, f.cfg.n_layer);
    }
  }
}

// An arbitrary input row x equals, bit for bit, the id r of an untied model whose table row r is x.
TEST(MixedBatch, AnArbitraryRowEqualsAnIdWhoseTableRowHoldsIt) {
  for (Family f : families()) {
    SCOPED_TRACE(f.name);
    if (f.dtype != io::DType::F32) continue;  // the table is rewritten in fp32
    f.cfg.tie_word_embeddings = false;        // the rewritten row must not change the output projection
    auto tensors = model::random_tensors(f.cfg, testing::tiny_init(32));
    auto tf = testing::tiny_transformer(f.cfg, tensors, 1);
    const int E = f.cfg.n_embd;
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 0.7f);
    std::vector<float> x(static_cast<size_t>(E));
    for (float& v : x) v = normal(rng);

    const int32_t r = 11;
    auto rows = layout_rows(f.cfg.n_vocab, 4);
    std::vector<bool> which(rows.size(), false);
    for (size_t i : {size_t{2}, size_t{5}, size_t{8}}) {
      rows[i].id = r;
      which[i] = true;
    }
    std::vector<float> table = embedding_table(f.cfg, tensors);
    std::copy(x.begin(), x.end(), table.begin() + static_cast<size_t>(r) * E);
    io::TensorMap edited = tensors;
    const std::string name = model::hf_name(f.cfg, model::TensorId::TokEmbd);
    edited.add_f32(name, edited.find(name)->shape, table);
    auto tf_edited = testing::tiny_transformer(f.cfg, edited, 1);

    KvCache a(f.cfg), b(f.cfg);
    std::vector<float> got, want;
    ASSERT_TRUE(tf->forward(make_batch(rows, which, table, E, &x), a, got).ok());
    ASSERT_TRUE(
        tf_edited->forward(make_batch(rows, std::vector<bool>(rows.size(), false), table, E), b, want).ok());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "logit " << i;
    expect_caches_equal_exactly(a, b, f.cfg.n_layer);
    // The row matters: the same batch with the original table row gives other logits.
    KvCache c(f.cfg);
    std::vector<float> other;
    ASSERT_TRUE(tf->forward(make_batch(rows, which, embedding_table(f.cfg, tensors), E), c, other).ok());
    EXPECT_NE(other, got);
  }
}

TEST(MixedBatch, EqualsRowByRowDecodingWithTheCache) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.name);
    const auto tensors = model::random_tensors(f.cfg, testing::tiny_init(33, f.dtype));
    auto tf = testing::tiny_transformer(f.cfg, tensors, 2);
    const int E = f.cfg.n_embd, V = f.cfg.n_vocab;
    // Input rows that are no table rows: random vectors for every other row.
    std::mt19937 rng(6);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    const auto rows = layout_rows(V, 5);
    std::vector<std::vector<float>> inputs(rows.size());
    for (size_t i = 0; i < rows.size(); i += 2) {
      inputs[i].resize(static_cast<size_t>(E));
      for (float& v : inputs[i]) v = normal(rng);
    }
    auto add_row = [&](Batch& b, size_t i) {
      const Row& r = rows[i];
      if (inputs[i].empty())
        b.add(
            {.id = r.id, .pos = r.pos, .group = r.group, .n_src = r.n_src, .n_tgt = r.n_tgt, .logits = true});
      else
        ASSERT_GE(b.add_embedded(
                      inputs[i],
                      {.pos = r.pos, .group = r.group, .n_src = r.n_src, .n_tgt = r.n_tgt, .logits = true}),
                  0);
    };
    Batch full;
    for (size_t i = 0; i < rows.size(); ++i) add_row(full, i);
    KvCache full_cache(f.cfg);
    std::vector<float> want;
    ASSERT_TRUE(tf->forward(full, full_cache, want).ok());

    KvCache cache(f.cfg);
    std::vector<float> got;
    // One row at a time (the few-token kernel) against one batch (sgemm): the same operations with the
    // linear layers' dots summed in other orders; forward_order_bound (testing/forward_bounds.h) derives the
    // tolerance per layer, above gpe.md §8's 1e-4 / 1e-5 for these models.
    const testing::ForwardOrderBound tol = testing::forward_order_bound(f.cfg, tf->weights());
    for (size_t i = 0; i < rows.size(); ++i) {
      Batch one;
      add_row(one, i);
      ASSERT_TRUE(tf->forward(one, cache, got).ok());
      for (int v = 0; v < V; ++v) ASSERT_NEAR(got[v], want[i * V + v], tol.logits) << "row " << i;
    }
    for (Group g : {Group::Source, Group::Target}) {
      ASSERT_EQ(cache.rows(g), full_cache.rows(g));
      const int64_t n = int64_t{cache.rows(g)} * cache.kv_dim();
      for (int l = 0; l < f.cfg.n_layer; ++l)
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_NEAR(cache.k(l, g)[i], full_cache.k(l, g)[i], tol.k[l]) << "layer " << l;
          ASSERT_NEAR(cache.v(l, g)[i], full_cache.v(l, g)[i], tol.v[l]) << "layer " << l;
        }
    }
  }
}

TEST(MixedBatch, MalformedEmbeddingInputIsRefusedAndLeavesTheCacheUnchanged) {
  const auto cfg = testing::tiny_config(false, true, false);
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(34)));
  const int E = cfg.n_embd;
  const std::vector<float> row(static_cast<size_t>(E), 0.25f), narrow(static_cast<size_t>(E - 1), 0.25f);
  KvCache cache(cfg);
  std::vector<float> logits;
  auto refused = [&](const Batch& b, const std::string& says) {
    Status s = tf->forward(b, cache, logits);
    ASSERT_FALSE(s.ok()) << says;
    EXPECT_NE(s.error().message().find(says), std::string::npos) << s.error().message();
    EXPECT_EQ(cache.rows(Group::Source), 0);
    EXPECT_EQ(cache.rows(Group::Target), 0);
  };
  {  // Rows narrower than n_embd.
    Batch b;
    b.add({.id = 1, .pos = 0, .group = Group::Source, .n_src = 1});
    ASSERT_EQ(b.add_embedded(narrow, {.pos = 1, .group = Group::Source, .n_src = 2}), 1);
    refused(b, "31 floats wide, the model's n_embd is 32");
  }
  {  // A buffer that is not whole rows.
    Batch b;
    ASSERT_EQ(b.add_embedded(row, {.pos = 0, .group = Group::Source, .n_src = 1}), 0);
    b.embeddings.push_back(1.0f);
    refused(b, "not a whole number of rows");
  }
  {  // A row index past the buffer, and a buffer that was never filled.
    Batch b;
    ASSERT_EQ(b.add_embedded(row, {.pos = 0, .group = Group::Source, .n_src = 1}), 0);
    b.tokens[0].embedding = 1;
    refused(b, "input embedding row 1 past the batch's 1 rows");
    Batch empty;
    empty.add({.id = 1, .pos = 0, .group = Group::Source, .n_src = 1});
    empty.tokens[0].embedding = 0;
    refused(empty, "input embedding row 0 past the batch's 0 rows");
  }
  {  // add_embedded refuses an empty row and a width unlike the earlier rows, adding nothing.
    Batch b;
    EXPECT_EQ(b.add_embedded({}, {.pos = 0, .group = Group::Source, .n_src = 1}), -1);
    EXPECT_EQ(b.embedding_width, 0);
    ASSERT_EQ(b.add_embedded(row, {.pos = 0, .group = Group::Source, .n_src = 1}), 0);
    EXPECT_EQ(b.add_embedded(narrow, {.pos = 1, .group = Group::Source, .n_src = 2}), -1);
    EXPECT_EQ(b.size(), 1);
    EXPECT_EQ(b.n_embedding_rows(), 1);
    EXPECT_EQ(b.embeddings.size(), row.size());
    // Ids are still checked on the other rows of a mixed batch.
    b.add({.id = cfg.n_vocab, .pos = 1, .group = Group::Source, .n_src = 2});
    refused(b, "outside the vocabulary");
    b.tokens.back().id = 3;
    EXPECT_TRUE(tf->forward(b, cache, logits).ok());
    EXPECT_EQ(cache.rows(Group::Source), 2);
  }
}

}  // namespace
}  // namespace gpstream
