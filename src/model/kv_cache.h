// KvCache: the attention keys and values of ONE sequence, in two regions — the source group and the
// target group (gpe.md §3) — each filled in arrival order. Keys are stored after RoPE, so a row's
// position never needs recomputing; `rerotate` moves rows to new positions (reencode-pos, gpe.md §6).
// Rows: [n_head_kv * head_dim] floats per layer for K and for V. Regions grow on demand up to a
// capacity limit, so memory per stream is bounded.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/model_config.h"
#include "model/rope_frequencies.h"
#include "util/error.h"

namespace gpstream::model {

enum class Group : uint8_t { Source = 0, Target = 1 };

class KvCache {
 public:
  // max_rows: capacity limit of each region.
  KvCache(const ModelConfig& config, int max_rows = 1 << 16);

  int rows(Group g) const { return region(g).rows; }
  int max_rows() const { return max_rows_; }
  int64_t kv_dim() const { return kv_dim_; }
  const float* k(int layer, Group g) const { return region(g).k[layer].data(); }
  const float* v(int layer, Group g) const { return region(g).v[layer].data(); }
  float* k(int layer, Group g) { return region(g).k[layer].data(); }
  float* v(int layer, Group g) { return region(g).v[layer].data(); }
  const std::vector<float>& positions(Group g) const { return region(g).pos; }

  // Makes room for `extra` more rows in a region (capacity error past max_rows).
  Status reserve(Group g, int extra);
  // Appends one row's position; K/V of that row are written by the forward pass at index rows()-1.
  void push_row(Group g, float position);
  // Appends the first n rows of `from`'s region g (keys, values, positions) after this cache's rows of g.
  // Both caches must have the same shape (layers, kv_dim); n <= from.rows(g).
  Status append_rows(Group g, const KvCache& from, int n);
  // Keeps the first n rows of a region (truncate-last is truncate(g, rows(g) - 1)).
  void truncate(Group g, int n);
  // Removes rows [begin, end) of a region, shifting later rows down (drop a finished segment).
  void erase(Group g, int begin, int end);
  // Moves rows [begin, begin + n) to new positions by rotating their keys by the position difference.
  void rerotate(Group g, int begin, const float* new_positions, int n, const RopeFrequencies& rope);
  void clear();
  // Gives memory back: each region's capacity becomes max(rows, keep_rows) where it was larger (a session
  // that has dropped a long sentence's rows does not keep their memory while it waits for the next one).
  void shrink(int keep_rows);
  // Bytes of K/V held (capacity, not rows).
  size_t bytes() const;

 private:
  struct Region {
    std::vector<std::vector<float>> k, v;  // per layer, rows * kv_dim
    std::vector<float> pos;
    int rows = 0;
    int capacity = 0;
  };
  Region& region(Group g) { return regions_[static_cast<int>(g)]; }
  const Region& region(Group g) const { return regions_[static_cast<int>(g)]; }

  int n_layer_;
  int64_t kv_dim_;
  int64_t head_dim_;
  int n_head_kv_;
  int max_rows_;
  std::array<Region, 2> regions_;
};

}  // namespace gpstream::model
