// Rotary embedding parameters of a model.
#include "model/rope_frequencies.h"

#include "kernels/rope.h"

namespace gpstream::model {

RopeFrequencies RopeFrequencies::from_config(const ModelConfig& c) {
  RopeFrequencies r;
  r.head_dim = c.head_dim;
  r.rot_dim = c.rope_dim();
  r.inv_short = c.rope_inv_freq();
  if (c.rope_scaling.type == RopeScalingType::LongRope) {
    r.inv_long = c.rope_inv_freq_long();
    r.long_threshold = static_cast<float>(c.rope_scaling.original_max_position_embeddings);
    r.scale = c.rope_scaling.attention_factor;
  }
  return r;
}

RopeFrequencies RopeFrequencies::plain(std::vector<float> inv_freq, int head_dim) {
  RopeFrequencies r;
  r.rot_dim = static_cast<int>(inv_freq.size()) * 2;
  r.head_dim = head_dim;
  r.inv_short = std::move(inv_freq);
  return r;
}

void RopeFrequencies::table(float* cos_out, float* sin_out, const float* positions, int64_t n) const {
  const int64_t h = half();
  for (int64_t t = 0; t < n; ++t)
    kernels::rope_table(cos_out + t * h, sin_out + t * h, positions + t, for_position(positions[t]).data(), 1,
                        h, scale);
}

void RopeFrequencies::apply(float* x, int64_t ld, const float* cos_t, const float* sin_t, int64_t n,
                            int64_t n_heads, float sign) const {
  kernels::rope_apply(x, ld, cos_t, sin_t, n, n_heads, head_dim, sign, rot_dim);
}

void RopeFrequencies::rerotate_row(float* k_row, int64_t n_heads_kv, float from, float to) const {
  const int64_t h = half();
  std::vector<float> c(static_cast<size_t>(h)), s(static_cast<size_t>(h));
  const std::vector<float>& f_from = for_position(from);
  const std::vector<float>& f_to = for_position(to);
  if (&f_from == &f_to) {
    // RoPE(p') = R(p' − p) · RoPE(p); the difference is taken in double inside rope_table by passing it
    // as a position. The stored key already carries `scale`, so this rotation is unscaled.
    const float delta = static_cast<float>(static_cast<double>(to) - from);
    kernels::rope_table(c.data(), s.data(), &delta, f_from.data(), 1, h);
    kernels::rope_apply(k_row, 0, c.data(), s.data(), 1, n_heads_kv, head_dim, 1.0f, rot_dim);
    return;
  }
  // Longrope across the threshold: undo the rotation at `from` with its frequencies, apply `to`'s.
  kernels::rope_table(c.data(), s.data(), &from, f_from.data(), 1, h);
  kernels::rope_apply(k_row, 0, c.data(), s.data(), 1, n_heads_kv, head_dim, -1.0f, rot_dim);
  kernels::rope_table(c.data(), s.data(), &to, f_to.data(), 1, h);
  kernels::rope_apply(k_row, 0, c.data(), s.data(), 1, n_heads_kv, head_dim, 1.0f, rot_dim);
}

}  // namespace gpstream::model
