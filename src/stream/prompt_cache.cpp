// The prompt's K/V rows, computed once and copied into sessions (see prompt_cache.h).
#include "stream/prompt_cache.h"

#include <algorithm>
#include <string>

#include "model/batch.h"
#include "stream/log_probs.h"

namespace gpstream::stream {

PromptCache::PromptCache(const model::ForwardModel& model, std::vector<int32_t> ids)
    : model_(&model),
      ids_(std::move(ids)),
      rows_(model.config(), std::max<int>(1, static_cast<int>(ids_.size()))) {}

Result<std::shared_ptr<const PromptCache>> PromptCache::build(model::ForwardModel& model,
                                                              const SegmentCodec& codec) {
  GPS_ASSIGN(std::vector<int32_t> ids, codec.encode(SegmentKind::Prompt, "", true));
  GPS_TRY(check_template_ids(ids, model.config().n_vocab));
  auto cache = std::shared_ptr<PromptCache>(new PromptCache(model, std::move(ids)));
  const int p = static_cast<int>(cache->ids_.size());
  if (p == 0) return std::shared_ptr<const PromptCache>(std::move(cache));
  model::Batch batch;
  for (int i = 0; i < p; ++i)  // as Session::queue_source lays out a fresh session's prompt
    batch.add({.id = cache->ids_[static_cast<size_t>(i)],
               .pos = static_cast<float>(i),
               .group = model::Group::Source,
               .n_src = i + 1,
               .logits = i + 1 == p});
  model::KvCache* caches[] = {&cache->rows_};
  std::vector<float> logits;
  GPS_TRY(model.forward(batch, caches, logits));
  std::vector<double> log_probs;
  log_softmax(std::span<const float>(logits).first(static_cast<size_t>(model.config().n_vocab)), log_probs);
  cache->next_log_probs_.assign(log_probs.begin(), log_probs.end());
  return std::shared_ptr<const PromptCache>(std::move(cache));
}

Status PromptCache::copy_into(model::KvCache& cache) const {
  if (cache.rows(model::Group::Source) != 0)
    return invalid_argument("the prompt's rows go into an empty source region");
  return cache.append_rows(model::Group::Source, rows_, static_cast<int>(ids_.size()));
}

}  // namespace gpstream::stream
