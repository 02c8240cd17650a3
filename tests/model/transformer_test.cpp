// Transformer forward: structured mask vs a dense-mask naive reference, KV-cache consistency for
// consecutive, restarting (φ = 0, 0.5) positions and after truncate-last + re-feed.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../testing/forward_bounds.h"
#include "reference_transformer.h"
#include "tiny_models.h"

namespace gpstream {
namespace {

using model::Batch;
using model::Group;
using model::KvCache;

// A token of a layout: group and visibility counts (regions filled in order).
struct LayoutTok {
  int id;
  float pos;
  Group group;
  int n_src, n_tgt;
};

// Dense mask equivalent to the structured visibility of a layout (built by brute force).
std::vector<std::vector<bool>> dense_mask(const std::vector<LayoutTok>& toks) {
  const size_t T = toks.size();
  std::vector<int> idx(T);
  int ns = 0, nt = 0;
  for (size_t i = 0; i < T; ++i) idx[i] = toks[i].group == Group::Source ? ns++ : nt++;
  std::vector<std::vector<bool>> m(T, std::vector<bool>(T));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j)
      m[i][j] = toks[j].group == Group::Source ? idx[j] < toks[i].n_src : idx[j] < toks[i].n_tgt;
  return m;
}

// Source of S tokens at 0..S-1, then target of N tokens at phi.., target i sees src_vis[i] source rows.
std::vector<LayoutTok> group_layout(int S, int N, float phi, const std::vector<int>& src_vis, uint32_t seed,
                                    int vocab) {
  std::mt19937 rng(seed);
  std::vector<LayoutTok> v;
  for (int s = 0; s < S; ++s)
    v.push_back({static_cast<int>(rng() % vocab), static_cast<float>(s), Group::Source, s + 1, 0});
  for (int t = 0; t < N; ++t)
    v.push_back(
        {static_cast<int>(rng() % vocab), phi + static_cast<float>(t), Group::Target, src_vis[t], t + 1});
  return v;
}

std::vector<float> run_full(model::Transformer& tf, const std::vector<LayoutTok>& toks, KvCache& cache) {
  Batch b;
  for (const auto& t : toks)
    b.add({.id = t.id, .pos = t.pos, .group = t.group, .n_src = t.n_src, .n_tgt = t.n_tgt, .logits = true});
  std::vector<float> logits;
  Status s = tf.forward(b, cache, logits);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return logits;
}

double max_abs_diff(const float* a, const float* b, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  return m;
}

struct Variant {
  bool qwen2, tied, llama3;
  io::DType dtype;
};

class TransformerTest : public ::testing::TestWithParam<Variant> {};

TEST_P(TransformerTest, StructuredMaskMatchesDenseReference) {
  const Variant v = GetParam();
  auto cfg = testing::tiny_config(v.qwen2, v.tied, v.llama3);
  auto tensors = model::random_tensors(cfg, testing::tiny_init(7, v.dtype));
  auto tf = testing::tiny_transformer(cfg, tensors);
  for (float phi : {0.0f, 0.5f, 37.25f}) {
    auto toks = group_layout(6, 5, phi, {2, 3, 3, 5, 6}, 11, cfg.n_vocab);
    // An interleaved-style twist: the last source token also sees the first two target rows.
    toks.push_back({3, 12.0f, Group::Source, 7, 2});
    KvCache cache(cfg);
    auto got = run_full(*tf, toks, cache);
    std::vector<testing::RefToken> rt;
    for (const auto& t : toks) rt.push_back({t.id, t.pos});
    auto want = testing::reference_forward(cfg, tensors, rt, dense_mask(toks));
    // One fp32 forward against the double reference over the same (widened) weights: forward_order_bound
    // against a reference (testing/forward_bounds.h), every row seeing at most all toks.size() rows.
    const double tol =
        testing::forward_order_bound(
            cfg, tf->weights(), {.against_reference = true, .max_rows = static_cast<int64_t>(toks.size())})
            .logits;
    for (size_t r = 0; r < toks.size(); ++r)
      for (int i = 0; i < cfg.n_vocab; ++i)
        ASSERT_NEAR(got[r * cfg.n_vocab + i], want[r][i], tol)
            << "phi " << phi << " row " << r << " col " << i;
  }
}

// The attention tap: the probabilities over its source rows of each row that asked, source and target rows
// alike, against the dense reference's.
TEST_P(TransformerTest, AttentionTapMatchesDenseReference) {
  const Variant v = GetParam();
  auto cfg = testing::tiny_config(v.qwen2, v.tied, v.llama3);
  auto tensors = model::random_tensors(cfg, testing::tiny_init(7, v.dtype));
  auto tf = testing::tiny_transformer(cfg, tensors);
  auto toks = group_layout(6, 5, 0.5f, {2, 3, 3, 5, 6}, 11, cfg.n_vocab);
  toks.push_back({3, 12.0f, Group::Source, 7, 2});
  const std::vector<size_t> tapped = {3, 6, 8, 10, 11};  // source rows 3 and 6, target rows 0, 2 and 4
  Batch b;
  for (size_t i = 0; i < toks.size(); ++i) {
    const LayoutTok& t = toks[i];
    b.add({.id = t.id,
           .pos = t.pos,
           .group = t.group,
           .n_src = t.n_src,
           .n_tgt = t.n_tgt,
           .logits = i % 2 == 0,
           .attention = std::find(tapped.begin(), tapped.end(), i) != tapped.end()});
  }
  KvCache cache(cfg);
  std::vector<float> logits;
  const Status st = tf->forward(b, cache, logits);
  ASSERT_TRUE(st.ok()) << st.error().message();
  std::vector<testing::RefToken> rt;
  std::vector<size_t> source_token;  // the token of each source row
  for (size_t i = 0; i < toks.size(); ++i) {
    rt.push_back({toks[i].id, toks[i].pos});
    if (toks[i].group == Group::Source) source_token.push_back(i);
  }
  testing::RefAttention want;
  testing::reference_forward(cfg, tensors, rt, dense_mask(toks), &want);
  // One fp32 forward against the double reference: forward_order_bound's attention bound per layer.
  const testing::ForwardOrderBound bound = testing::forward_order_bound(
      cfg, tf->weights(), {.against_reference = true, .max_rows = static_cast<int64_t>(toks.size())});
  for (size_t n = 0; n < tapped.size(); ++n) {
    const LayoutTok& t = toks[tapped[n]];
    const std::span<const float> got = tf->source_attention(static_cast<int>(n));
    ASSERT_EQ(got.size(), static_cast<size_t>(cfg.n_layer * cfg.n_head * t.n_src)) << "tapped row " << n;
    for (int l = 0; l < cfg.n_layer; ++l)
      for (int h = 0; h < cfg.n_head; ++h)
        for (int r = 0; r < t.n_src; ++r)
          ASSERT_NEAR(got[static_cast<size_t>((l * cfg.n_head + h) * t.n_src + r)],
                      want[l][h][tapped[n]][source_token[static_cast<size_t>(r)]], bound.attention[l])
              << "tapped row " << n << " layer " << l << " head " << h << " source row " << r;
  }
  EXPECT_TRUE(tf->source_attention(static_cast<int>(tapped.size())).empty());
  // A forward without taps leaves none.
  for (auto& t : b.tokens) t.attention = false;
  KvCache fresh(cfg);
  ASSERT_TRUE(tf->forward(b, fresh, logits).ok());
  EXPECT_TRUE(tf->source_attention(0).empty());
}

void check_incremental_equals_full(const model::ModelConfig& cfg, const io::TensorMap& tensors,
                                   std::initializer_list<float> phis);

TEST_P(TransformerTest, IncrementalDecodingEqualsFullForward) {
  const Variant v = GetParam();
  auto cfg = testing::tiny_config(v.qwen2, v.tied, v.llama3);
  check_incremental_equals_full(cfg, model::random_tensors(cfg, testing::tiny_init(9, v.dtype)),
                                {-1.0f, 0.0f, 0.5f});
}

// Gemma 2 (windows of 3 per group on layers 0 and 2, soft-caps) and Phi-3 (window 3 on every layer,
// longrope switching to the long factors past position 15 (p + 1 > 16): φ = 14 crosses it mid-target).
TEST(TransformerFamilies, IncrementalDecodingEqualsFullForward) {
  for (const auto& cfg : {testing::tiny_gemma2_config(), testing::tiny_phi3_config()}) {
    SCOPED_TRACE(cfg.model_type);
    check_incremental_equals_full(cfg, model::random_tensors(cfg, testing::tiny_init(9)),
                                  {-1.0f, 0.5f, 14.0f});
  }
}

void check_incremental_equals_full(const model::ModelConfig& cfg, const io::TensorMap& tensors,
                                   std::initializer_list<float> phis) {
  auto tf = testing::tiny_transformer(cfg, tensors, 2);
  for (float phi : phis) {  // -1: consecutive positions (target continues after source)
    const int S = 5, N = 6;
    const float p0 = phi < 0 ? static_cast<float>(S) : phi;
    auto toks = group_layout(S, N, p0, {2, 3, 4, 5, 5, 5}, 5, cfg.n_vocab);
    KvCache full_cache(cfg);
    auto full = run_full(*tf, toks, full_cache);

    // Incremental: source in two chunks, then target one token at a time.
    KvCache cache(cfg);
    std::vector<float> logits;
    std::vector<std::vector<float>> rows(toks.size());
    size_t i = 0;
    for (size_t chunk_end : {size_t{2}, size_t{S}}) {
      Batch b;
      size_t first = i;
      for (; i < chunk_end; ++i)
        b.add({.id = toks[i].id,
               .pos = toks[i].pos,
               .group = toks[i].group,
               .n_src = toks[i].n_src,
               .n_tgt = toks[i].n_tgt,
               .logits = true});
      ASSERT_TRUE(tf->forward(b, cache, logits).ok());
      for (size_t r = first; r < chunk_end; ++r)
        rows[r].assign(logits.begin() + (r - first) * cfg.n_vocab,
                       logits.begin() + (r - first + 1) * cfg.n_vocab);
    }
    for (; i < toks.size(); ++i) {
      Batch b;
      b.add({.id = toks[i].id,
             .pos = toks[i].pos,
             .group = toks[i].group,
             .n_src = toks[i].n_src,
             .n_tgt = toks[i].n_tgt,
             .logits = true});
      ASSERT_TRUE(tf->forward(b, cache, logits).ok());
      rows[i] = logits;
      if (i == static_cast<size_t>(S) + 2) {
        // truncate-last + re-feed must reproduce the same row.
        cache.truncate(Group::Target, cache.rows(Group::Target) - 1);
        ASSERT_TRUE(tf->forward(b, cache, logits).ok());
        // The same one-row batch over the same cache rows: the same operations in the same order.
        EXPECT_EQ(max_abs_diff(logits.data(), rows[i].data(), cfg.n_vocab), 0.0);
      }
    }
    // Chunks and single rows (the few-token kernel) against one batch (sgemm): the linear layers' dots
    // summed in other orders; forward_order_bound (testing/forward_bounds.h) derives the tolerance per layer,
    // above gpe.md §8's 1e-4 / 1e-5 for these models.
    const testing::ForwardOrderBound tol = testing::forward_order_bound(cfg, tf->weights());
    for (size_t r = 0; r < toks.size(); ++r)
      EXPECT_LE(max_abs_diff(rows[r].data(), full.data() + r * cfg.n_vocab, cfg.n_vocab), tol.logits)
          << "row " << r;
    // Cached K/V equal.
    for (int l = 0; l < cfg.n_layer; ++l)
      for (Group g : {Group::Source, Group::Target}) {
        ASSERT_EQ(cache.rows(g), full_cache.rows(g));
        int n = cache.rows(g) * static_cast<int>(cache.kv_dim());
        EXPECT_LE(max_abs_diff(cache.k(l, g), full_cache.k(l, g), n), tol.k[l]) << "layer " << l;
        EXPECT_LE(max_abs_diff(cache.v(l, g), full_cache.v(l, g), n), tol.v[l]) << "layer " << l;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, TransformerTest,
                         ::testing::Values(Variant{false, false, true, io::DType::F32},
                                           Variant{false, true, false, io::DType::BF16},
                                           Variant{true, true, false, io::DType::F32},
                                           Variant{true, false, false, io::DType::F16}));

// Forwards three target tokens at old_pos into one cache and at new_pos into another, re-rotates the first
// cache's rows to new_pos, and returns the largest layer-0 key (and value) difference. Layer-0 keys depend
// only on the token and its position, so a re-rotated key must equal the key computed at the new position.
// k_bound: both sides rotate the same pre-RoPE key (layer 0, same token, same 3-row batch): directly at
// new_pos once, or at old_pos and then by the difference (undo and redo across the longrope threshold).
// Angles are taken in double (kernels/rope.cpp), so a rotation of a pair (a, b) rounds its cos/sin table
// entries (u, plus u for the longrope scale) and a·c − b·s (γ_2): |err| ≤ γ_4 (|a| + |b|) ≤ γ_4 √2 ‖(a, b)‖₂,
// and rotations keep ‖(a, b)‖₂ (times the scale, already in the cached keys). Direct 4 + rerotated
// 4 + 3 + 3 roundings: k_bound = γ_14 √2 max‖(a, b)‖₂ over the cached pairs.
struct RerotateDiff {
  double k = 0, v = 0, k_bound = 0;
  float last_position = 0;
};
RerotateDiff rerotate_against_direct(const model::ModelConfig& cfg, const float old_pos[3],
                                     const float new_pos[3], uint64_t seed) {
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(seed)));
  KvCache a(cfg), b(cfg);
  std::vector<float> logits;
  Batch ba, bb;
  for (int i = 0; i < 3; ++i) {
    ba.add({.id = 10 + i, .pos = old_pos[i], .group = Group::Target, .n_src = 0, .n_tgt = i + 1});
    bb.add({.id = 10 + i, .pos = new_pos[i], .group = Group::Target, .n_src = 0, .n_tgt = i + 1});
  }
  EXPECT_TRUE(tf->forward(ba, a, logits).ok());
  EXPECT_TRUE(tf->forward(bb, b, logits).ok());
  a.rerotate(Group::Target, 0, new_pos, 3, tf->rope());
  const int n = 3 * static_cast<int>(a.kv_dim());
  double pair = 0;
  const int half = cfg.rope_dim() / 2;
  for (int row = 0; row < 3 * cfg.n_head_kv; ++row)
    for (int i = 0; i < half; ++i) {
      const double x1 = b.k(0, Group::Target)[row * cfg.head_dim + i],
                   x2 = b.k(0, Group::Target)[row * cfg.head_dim + i + half];
      pair = std::max(pair, std::sqrt(x1 * x1 + x2 * x2));
    }
  return {max_abs_diff(a.k(0, Group::Target), b.k(0, Group::Target), n),
          max_abs_diff(a.v(0, Group::Target), b.v(0, Group::Target), n),
          testing::gamma_n(14) * std::sqrt(2.0) * pair, a.positions(Group::Target)[2]};
}

TEST(Transformer, RerotateMovesLayerZeroKeysToNewPositions) {
  const float old_pos[3] = {0.0f, 1.0f, 2.0f}, new_pos[3] = {7.5f, 8.5f, 300.0f};
  const RerotateDiff d =
      rerotate_against_direct(testing::tiny_config(false, true, false), old_pos, new_pos, 3);
  EXPECT_LE(d.k, d.k_bound);
  EXPECT_EQ(d.v, 0.0);  // values are not rotated: both are the same layer-0 computation of the same tokens
  EXPECT_EQ(d.last_position, 300.0f);
}

// Longrope: a key moved across the long-factor threshold (p + 1 > 16) and partial rotary (6 of 8 dims).
TEST(Transformer, RerotateAcrossTheLongropeThresholdEqualsDirectKeys) {
  const float old_pos[3] = {0.0f, 20.0f, 2.0f}, new_pos[3] = {30.5f, 3.0f, 9.0f};
  const RerotateDiff d = rerotate_against_direct(testing::tiny_phi3_config(), old_pos, new_pos, 4);
  EXPECT_LE(d.k, d.k_bound);
}

TEST(Transformer, BadBatchesAreRejectedAndLeaveTheCacheUnchanged) {
  auto cfg = testing::tiny_config(false, true, false);
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(1)));
  KvCache cache(cfg, 4);
  std::vector<float> logits;
  Batch bad_id;
  bad_id.add({.id = cfg.n_vocab, .pos = 0, .group = Group::Source, .n_src = 1});
  EXPECT_FALSE(tf->forward(bad_id, cache, logits).ok());
  Batch too_visible;
  too_visible.add({.id = 1, .pos = 0, .group = Group::Source, .n_src = 2});
  EXPECT_FALSE(tf->forward(too_visible, cache, logits).ok());
  Batch too_long;
  for (int i = 0; i < 5; ++i)
    too_long.add({.id = 1, .pos = static_cast<float>(i), .group = Group::Source, .n_src = i + 1});
  Status s = tf->forward(too_long, cache, logits);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("cache region full"), std::string::npos);
  EXPECT_EQ(cache.rows(Group::Source), 0);
}

}  // namespace
}  // namespace gpstream
