// PromptCache: the K/V rows of a template's prompt, computed once per model and copied into every new
// session's cache instead of being forwarded again by each one (prefix caching, as servers do).
// The prompt is the same first rows of the source group in every paradigm — positions 0..P-1, each row
// seeing the prompt rows before it and nothing else — and no paradigm recomputes source rows, so the copied
// rows are the rows a session would compute itself (up to fp32 summation order where a kernel's result
// depends on the batch it runs in). A Scheduler serving many short sessions saves P rows per session.
#pragma once

#include <memory>
#include <vector>

#include "model/forward_model.h"
#include "model/kv_cache.h"
#include "stream/codec.h"

namespace gpstream::stream {

class PromptCache {
 public:
  // Forwards codec's prompt through model once (alone, as one sequence) and keeps its rows.
  static Result<std::shared_ptr<const PromptCache>> build(model::ForwardModel& model,
                                                          const SegmentCodec& codec);

  const std::vector<int32_t>& ids() const { return ids_; }
  // The model whose rows these are: a session may only use the cache with that model.
  const model::ForwardModel* model() const { return model_; }
  // log P(token | prompt) for every vocabulary id: the row a fresh segment's first word is read from.
  // Empty for an empty prompt.
  const std::vector<float>& next_log_probs() const { return next_log_probs_; }
  // Appends the prompt's rows to the (empty) source region of cache.
  Status copy_into(model::KvCache& cache) const;

 private:
  PromptCache(const model::ForwardModel& model, std::vector<int32_t> ids);

  const model::ForwardModel* model_;
  std::vector<int32_t> ids_;
  model::KvCache rows_;
  std::vector<float> next_log_probs_;
};

}  // namespace gpstream::stream
