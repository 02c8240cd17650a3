// RopeFrequencies: everything about a model's rotary embedding that the forward passes and the KV
// cache need, derived once from the ModelConfig — the inverse frequencies, the rotated dims (partial
// rotary), the factor on cos/sin (longrope's attention factor) and, for longrope, which frequency set a
// position uses. gpstream's longrope rule is per token: a token at position p uses the long factors iff
// p + 1 > original_max_position_embeddings (Hugging Face decides once per forward call from the largest
// position in it; the two agree whenever a call's positions are all on one side — docs/models.md).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace gpstream::model {

struct RopeFrequencies {
  std::vector<float> inv_short;  // rot_dim / 2
  std::vector<float> inv_long;   // empty unless longrope
  float long_threshold = 0.0f;   // positions p with p + 1 > threshold use inv_long
  float scale = 1.0f;            // multiplies cos and sin (so q·k by scale²)
  int head_dim = 0;
  int rot_dim = 0;

  static RopeFrequencies from_config(const ModelConfig& c);
  // A single frequency set for tests and fakes.
  static RopeFrequencies plain(std::vector<float> inv_freq, int head_dim);

  int half() const { return rot_dim / 2; }
  const std::vector<float>& for_position(float p) const {
    return !inv_long.empty() && static_cast<double>(p) + 1.0 > long_threshold ? inv_long : inv_short;
  }
  // cos/sin tables [n, rot_dim / 2] (scaled) for the given positions.
  void table(float* cos_out, float* sin_out, const float* positions, int64_t n) const;
  // Rotates the first rot_dim dims of each head of x [n, n_heads, head_dim] (row stride ld) with tables
  // from table(); sign = -1 undoes it (backward).
  void apply(float* x, int64_t ld, const float* cos_t, const float* sin_t, int64_t n, int64_t n_heads,
             float sign = 1.0f) const;
  // Moves one cached key row (all kv heads, already rotated at `from`) to position `to`.
  void rerotate_row(float* k_row, int64_t n_heads_kv, float from, float to) const;
};

}  // namespace gpstream::model
