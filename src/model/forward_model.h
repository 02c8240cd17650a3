// ForwardModel: what the streaming layer needs from a model — one batched forward over a Batch into
// per-sequence KvCaches. model::Transformer implements it; tests implement it with scripted fakes,
// and the layout function with a recorder (stream/layout.h).
#pragma once

#include <span>
#include <vector>

#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model_config.h"
#include "model/rope_frequencies.h"
#include "util/error.h"

namespace gpstream::model {

class ForwardModel {
 public:
  virtual ~ForwardModel() = default;
  virtual const ModelConfig& config() const = 0;
  // The rotary embedding (for re-rotating cached keys).
  virtual const RopeFrequencies& rope() const = 0;
  // Appends every batch token's K/V row to caches[token.seq] in batch order and returns logits
  // [batch.n_logits(), n_vocab] for the rows that asked.
  virtual Status forward(const Batch& batch, std::span<KvCache* const> caches,
                         std::vector<float>& logits) = 0;
  // The attention tap: the i-th row of the last forward that asked (BatchToken::attention, counted in batch
  // order), its attention probabilities over its visible source rows, [n_layer][n_head][n_src] (n_src: the
  // row's BatchToken::n_src; rows a sliding window hides are 0). Rows that did not ask cost nothing. Empty
  // past the rows that asked, and for a model without the tap.
  virtual std::span<const float> source_attention(int /*i*/) const { return {}; }
};

}  // namespace gpstream::model
