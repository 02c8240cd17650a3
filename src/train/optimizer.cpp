// AdamW, clipping, schedules.
#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

namespace gpstream::train {

AdamW::AdamW(size_t n_params, AdamWOptions options)
    : m(n_params, 0.0f), v(n_params, 0.0f), options_(options) {}

void AdamW::step(ParamSet& params, const std::vector<float>& grads, float lr, int n_threads) {
  ++t;
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const float c1 =
      1.0f / (1.0f - static_cast<float>(std::pow(static_cast<double>(b1), static_cast<double>(t))));
  const float c2 =
      1.0f / (1.0f - static_cast<float>(std::pow(static_cast<double>(b2), static_cast<double>(t))));
  // Four distinct arrays: saying so (restrict), and compiling this file without errno (CMakeLists.txt), lets
  // the loop vectorize; the square root and the division are exact in either form.
  float* __restrict p = params.values.data();
  float* __restrict pm = m.data();
  float* __restrict pv = v.data();
  const float* __restrict g = grads.data();
  for (const ParamTensor& pt : params.tensors) {
    const float wd = pt.kind == ParamKind::Matrix ? options_.weight_decay : 0.0f;
    const float lr_t = lr * pt.lr_scale;
    const auto begin = static_cast<int64_t>(pt.offset), end = static_cast<int64_t>(pt.offset + pt.numel);
#pragma omp parallel for num_threads(n_threads) schedule(static) if (pt.numel > 16384)
    for (int64_t i = begin; i < end; ++i) {
      const float gi = g[i];
      pm[i] = b1 * pm[i] + (1.0f - b1) * gi;
      pv[i] = b2 * pv[i] + (1.0f - b2) * gi * gi;
      const float mh = pm[i] * c1, vh = pv[i] * c2;
      p[i] -= lr_t * (mh / (std::sqrt(vh) + eps) + wd * p[i]);
    }
  }
}

// Eight partial sums in a fixed order (still deterministic): one chain of dependent double adds over a
// model's millions of gradients was latency-bound (~2 % of a speech training step); independent lanes
// vectorize.
double grad_global_norm(const std::vector<float>& grads) {
  constexpr size_t kLanes = 8;
  double lane[kLanes] = {};
  const size_t n = grads.size(), body = n - n % kLanes;
  const float* g = grads.data();
  for (size_t i = 0; i < body; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) lane[j] += static_cast<double>(g[i + j]) * g[i + j];
  double s = 0.0;
  for (double l : lane) s += l;
  for (size_t i = body; i < n; ++i) s += static_cast<double>(g[i]) * g[i];
  return std::sqrt(s);
}

double clip_grad_norm(std::vector<float>& grads, double max_norm) {
  const double norm = grad_global_norm(grads);
  if (max_norm > 0.0 && norm > max_norm) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (float& g : grads) g *= scale;
  }
  return norm;
}

std::optional<ScheduleKind> parse_schedule(const std::string& name) {
  if (name == "constant") return ScheduleKind::Constant;
  if (name == "linear") return ScheduleKind::Linear;
  if (name == "cosine") return ScheduleKind::Cosine;
  return std::nullopt;
}

float Schedule::at(int64_t step) const {
  if (warmup_steps > 0 && step < warmup_steps)
    return lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps);
  if (kind == ScheduleKind::Constant) return lr;
  const int64_t decay = std::max<int64_t>(1, total_steps - warmup_steps);
  const double frac =
      std::clamp(static_cast<double>(step - warmup_steps) / static_cast<double>(decay), 0.0, 1.0);
  const double lo = static_cast<double>(min_lr_ratio);
  const double shape = kind == ScheduleKind::Linear ? 1.0 - frac : 0.5 * (1.0 + std::cos(M_PI * frac));
  return static_cast<float>(lr * (lo + (1.0 - lo) * shape));
}

}  // namespace gpstream::train
