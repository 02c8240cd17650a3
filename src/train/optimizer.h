// AdamW (Loshchilov & Hutter 2019) as a flat loop over a ParamSet, global-norm gradient clipping, and
// learning-rate schedules (constant / linear / cosine decay after a linear warm-up). Weight decay is
// decoupled and applies to matrices only (ParamKind::Matrix: not to norms, biases or embeddings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "train/params.h"

namespace gpstream::train {

struct AdamWOptions {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

class AdamW {
 public:
  AdamW() = default;
  AdamW(size_t n_params, AdamWOptions options);
  // One update with learning rate lr (× each tensor's lr_scale): θ ← θ − lr·(m̂/(√v̂ + ε) + wd·θ) (wd on
  // matrices only).
  void step(ParamSet& params, const std::vector<float>& grads, float lr, int n_threads);
  const AdamWOptions& options() const { return options_; }
  int64_t t = 0;            // steps taken (bias correction)
  std::vector<float> m, v;  // first and second moments, same layout as the ParamSet

 private:
  AdamWOptions options_;
};

// Euclidean norm of the whole gradient (double accumulation, fixed order: deterministic).
double grad_global_norm(const std::vector<float>& grads);
// Scales grads so their global norm is at most max_norm (if max_norm > 0); returns the norm before.
double clip_grad_norm(std::vector<float>& grads, double max_norm);

enum class ScheduleKind { Constant, Linear, Cosine };
std::optional<ScheduleKind> parse_schedule(const std::string& name);

struct Schedule {
  ScheduleKind kind = ScheduleKind::Cosine;
  float lr = 1e-3f;  // peak
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  float min_lr_ratio = 0.1f;  // final lr = min_lr_ratio · lr (linear and cosine)
  // Learning rate of optimizer step `step` (0-based): linear warm-up from lr/warmup to lr, then the decay.
  float at(int64_t step) const;
};

}  // namespace gpstream::train
