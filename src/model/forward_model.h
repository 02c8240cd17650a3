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
};

}  // namespace gpstream::model
