// Token choice: greedy or sampled.
#include "stream/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream::stream {

int32_t Sampler::choose(std::span<const float> logits, std::span<const int32_t> generated,
                        const std::function<bool(int32_t)>& allowed) {
  const int32_t n = static_cast<int32_t>(logits.size());
  work_.assign(logits.begin(), logits.end());
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (allowed)
    for (int32_t i = 0; i < n; ++i)
      if (!allowed(i)) work_[i] = kNegInf;
  if (o_.repetition_penalty != 1.0f) {
    std::vector<bool> seen(n, false);
    for (int32_t id : generated)
      if (id >= 0 && id < n && !seen[id]) {
        seen[id] = true;
        float& l = work_[id];
        l = l > 0 ? l / o_.repetition_penalty : l * o_.repetition_penalty;
      }
  }
  if (o_.temperature <= 0.0f)
    return static_cast<int32_t>(std::max_element(work_.begin(), work_.end()) - work_.begin());

  idx_.resize(n);
  for (int32_t i = 0; i < n; ++i) idx_[i] = i;
  std::sort(idx_.begin(), idx_.end(), [&](int32_t a, int32_t b) { return work_[a] > work_[b]; });
  int32_t keep = n;
  if (o_.top_k > 0) keep = std::min(keep, o_.top_k);
  while (keep > 1 && work_[idx_[keep - 1]] == kNegInf) --keep;
  const float mx = work_[idx_[0]];
  std::vector<double> p(keep);
  double sum = 0;
  for (int32_t i = 0; i < keep; ++i) sum += p[i] = std::exp((work_[idx_[i]] - mx) / o_.temperature);
  if (o_.top_p < 1.0f) {
    double acc = 0;
    int32_t cut = keep;
    for (int32_t i = 0; i < keep; ++i) {
      acc += p[i] / sum;
      if (acc >= o_.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    sum = 0;
    for (int32_t i = 0; i < keep; ++i) sum += p[i];
  }
  std::uniform_real_distribution<double> u(0.0, sum);
  double r = u(rng_);
  for (int32_t i = 0; i < keep; ++i) {
    r -= p[i];
    if (r <= 0) return idx_[i];
  }
  return idx_[keep - 1];
}

}  // namespace gpstream::stream
