// Shared by the gpe.md §8 invariant tests for text and audio sources: a ForwardModel wrapper that records
// each target row's last logits and the rows forwarded per group (audio rows apart), the tiny model of a
// family, and the §8.1 comparison of a forced Session against one full forward over the layout.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../model/tiny_models.h"
#include "../testing/forward_bounds.h"
#include "stream/layout.h"
#include "stream/session.h"

namespace gpstream::testing {

// Wraps a model and records, per target row, the logits of that row's last forward and the number of
// rows forwarded per group.
class Recorder final : public model::ForwardModel {
 public:
  explicit Recorder(model::ForwardModel& inner) : inner_(inner) {}
  const model::ModelConfig& config() const override { return inner_.config(); }
  const model::RopeFrequencies& rope() const override { return inner_.rope(); }
  Status forward(const model::Batch& b, std::span<model::KvCache* const> caches,
                 std::vector<float>& logits) override {
    GPS_TRY(inner_.forward(b, caches, logits));
    int r = 0;
    const int V = config().n_vocab;
    for (const auto& t : b.tokens) {
      ++forwarded[t.group];
      embedding_rows += t.embedding >= 0;
    }
    // Row index of each logits row: the batch's target rows are the last rows of the target region.
    int tgt_in_batch = 0;
    for (const auto& t : b.tokens) tgt_in_batch += t.group == model::Group::Target;
    int tgt_idx = caches[0]->rows(model::Group::Target) - tgt_in_batch;
    for (const auto& t : b.tokens) {
      if (t.group == model::Group::Target) {
        if (t.logits) row_logits[tgt_idx].assign(logits.begin() + r * V, logits.begin() + (r + 1) * V);
        ++tgt_idx;
      }
      r += t.logits;
    }
    return {};
  }
  std::map<int, std::vector<float>> row_logits;
  std::map<model::Group, int64_t> forwarded{{model::Group::Source, 0}, {model::Group::Target, 0}};
  int64_t embedding_rows = 0;  // rows whose input was an embedding row (audio)

 private:
  model::ForwardModel& inner_;
};

inline model::ModelConfig family_config(const std::string& family) {
  if (family == "gemma2") return tiny_gemma2_config();
  if (family == "phi3") return tiny_phi3_config();
  return tiny_config(false, false, false);
}

// The forced target tokens of a layout: its target labels, the end marker (eos) excluded.
inline std::vector<int32_t> forced_target(const stream::Layout& layout, int32_t eos) {
  std::vector<int32_t> forced;
  for (const auto& r : layout.rows)
    if (r.group == model::Group::Target && r.label >= 0 && r.label != eos) forced.push_back(r.label);
  return forced;
}

// gpe.md §8.1: the session's cached K/V equal the full forward's and the logits of each labelled target row's
// last forward equal the full forward's row. The session forwards a few rows at a time (the few-token linear
// kernel), the full forward all rows at once (OpenBLAS sgemm, whose kernel follows the CPU: SkylakeX on
// AVX-512, Haswell on AVX2): the same operations with each linear layer's dots summed in other orders. The
// tolerance is forward_order_bound (forward_bounds.h): per layer l, 2·γ_n·max_r‖W_r∘g‖₂√E with n = n_embd
// plus l layers of (n_embd + head_dim + n_head·head_dim + n_embd + n_ff) accumulations. For the tiny models
// it exceeds gpe.md §8's 1e-5 (K/V, from layer 0: n = 32, magnitude ≈ 10) and 1e-4 (logits): the derivation
// wins.
inline void expect_session_matches_full_forward(const stream::Layout& layout,
                                                const model::KvCache& full_cache,
                                                const std::vector<float>& full, const model::KvCache& cache,
                                                const Recorder& rec, const model::ModelConfig& cfg,
                                                const model::Weights& weights) {
  using model::Group;
  const ForwardOrderBound tol = forward_order_bound(cfg, weights);
  for (Group g : {Group::Source, Group::Target}) {
    ASSERT_EQ(cache.rows(g), full_cache.rows(g));
    const int n = cache.rows(g) * static_cast<int>(cache.kv_dim());
    for (int l = 0; l < cfg.n_layer; ++l)
      for (int i = 0; i < n; ++i) {
        ASSERT_NEAR(cache.k(l, g)[i], full_cache.k(l, g)[i], tol.k[l]) << "layer " << l;
        ASSERT_NEAR(cache.v(l, g)[i], full_cache.v(l, g)[i], tol.v[l]) << "layer " << l;
      }
  }
  // Row logits: the layout's target rows with labels are exactly the rows the session decided from.
  const int V = cfg.n_vocab;
  int tgt = 0, checked = 0;
  for (size_t r = 0; r < layout.rows.size(); ++r) {
    if (layout.rows[r].group != Group::Target) continue;
    if (layout.rows[r].label >= 0) {
      ASSERT_TRUE(rec.row_logits.count(tgt)) << "target row " << tgt;
      const std::vector<float>& got = rec.row_logits.at(tgt);
      for (int v = 0; v < V; ++v) ASSERT_NEAR(got[v], full[r * V + v], tol.logits) << "row " << r;
      ++checked;
    }
    ++tgt;
  }
  EXPECT_GT(checked, 0);
}

// gpe.md §8.3 for wait-k with M source units and N target words: each source row forwarded once, each
// target row once plus one re-feed per boundary at which a unit was read: max(0, min(N, M + 1 − k)), plus
// extra_refeeds (the early end markers of end_after_source).
inline void expect_forward_counts(const stream::Layout& layout, const Recorder& rec,
                                  const stream::Session& session, int M, int N, int k,
                                  int extra_refeeds = 0) {
  const int read_boundaries = std::max(0, std::min(N, M + 1 - k)) + extra_refeeds;
  EXPECT_EQ(rec.forwarded.at(model::Group::Source), layout.n_source_rows);
  EXPECT_EQ(rec.forwarded.at(model::Group::Target), layout.n_target_rows + read_boundaries);
  EXPECT_EQ(session.stats().refeeds, read_boundaries);
}

}  // namespace gpstream::testing
