// ShadowModel: the base of the scripted ForwardModels of the stream tests. It keeps, per cache, the token id
// of every row of both regions (resynchronised with the cache's row counts at each forward, so truncated and
// popped rows disappear from it too) and asks the derived model for each logits row, given those ids, and
// for the attention of each row that taps it (one layer of one head: t.n_src probabilities).
#pragma once

#include <array>
#include <map>
#include <vector>

#include "model/forward_model.h"

namespace gpstream::testing {

class ShadowModel : public model::ForwardModel {
 public:
  using Rows =
      std::array<std::vector<int32_t>, 2>;  // token ids of the source and target rows, in cache order

  explicit ShadowModel(int32_t n_vocab) {
    config_.n_vocab = n_vocab;
    config_.n_embd = config_.n_ff = config_.n_layer = config_.n_head = config_.n_head_kv = 1;
    config_.head_dim = 2;
    rope_ = model::RopeFrequencies::plain({1.0f}, 2);
  }
  const model::ModelConfig& config() const override { return config_; }
  const model::RopeFrequencies& rope() const override { return rope_; }
  Status forward(const model::Batch& b, std::span<model::KvCache* const> caches,
                 std::vector<float>& logits) override {
    logits.clear();
    taps_.clear();
    for (const auto& t : b.tokens) {
      model::KvCache& c = *caches[t.seq];
      Rows& sh = shadow_[&c];
      for (int g = 0; g < 2; ++g) sh[g].resize(c.rows(static_cast<model::Group>(g)));
      GPS_TRY(c.reserve(t.group, 1));
      c.push_row(t.group, t.pos);
      sh[static_cast<int>(t.group)].push_back(t.id);
      if (t.attention) taps_.push_back(row_attention(sh, t));
      if (!t.logits) continue;
      const std::vector<float> row = row_logits(sh, t);
      logits.insert(logits.end(), row.begin(), row.end());
    }
    return {};
  }
  std::span<const float> source_attention(int i) const override {
    if (i < 0 || static_cast<size_t>(i) >= taps_.size()) return {};
    return taps_[static_cast<size_t>(i)];
  }

 protected:
  // The logits row of token t (its own row is already in `rows`; it sees t.n_src and t.n_tgt of them).
  virtual std::vector<float> row_logits(const Rows& rows, const model::BatchToken& t) const = 0;
  // The attention of token t over its t.n_src source rows (default: uniform).
  virtual std::vector<float> row_attention(const Rows& /*rows*/, const model::BatchToken& t) const {
    return std::vector<float>(static_cast<size_t>(t.n_src),
                              t.n_src > 0 ? 1.0f / static_cast<float>(t.n_src) : 0.0f);
  }

 private:
  model::ModelConfig config_;
  model::RopeFrequencies rope_;
  std::map<const model::KvCache*, Rows> shadow_;
  std::vector<std::vector<float>> taps_;  // the last forward's attention rows
};

}  // namespace gpstream::testing
