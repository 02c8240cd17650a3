// KvCache regions: growth, truncation, erasure and re-rotation.
#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>

#include "kernels/rope.h"

namespace gpstream::model {

KvCache::KvCache(const ModelConfig& c, int max_rows)
    : n_layer_(c.n_layer),
      kv_dim_(int64_t{c.n_head_kv} * c.head_dim),
      head_dim_(c.head_dim),
      n_head_kv_(c.n_head_kv),
      max_rows_(max_rows) {
  for (Region& r : regions_) {
    r.k.resize(n_layer_);
    r.v.resize(n_layer_);
  }
}

Status KvCache::reserve(Group g, int extra) {
  Region& r = region(g);
  const int64_t need = int64_t{r.rows} + extra;
  if (need > max_rows_)
    return Error(ErrorCode::OutOfRange, std::string(g == Group::Source ? "source" : "target") +
                                            " cache region full: " + std::to_string(need) +
                                            " rows needed, limit " + std::to_string(max_rows_));
  if (need <= r.capacity) return {};
  int cap = std::max<int>(static_cast<int>(need), std::min<int>(max_rows_, std::max(64, r.capacity * 2)));
  for (int l = 0; l < n_layer_; ++l) {
    r.k[l].resize(static_cast<size_t>(cap) * kv_dim_);
    r.v[l].resize(static_cast<size_t>(cap) * kv_dim_);
  }
  r.capacity = cap;
  return {};
}

void KvCache::push_row(Group g, float position) {
  Region& r = region(g);
  GPS_ASSERT(r.rows < r.capacity, "push_row without reserve");
  r.pos.push_back(position);
  ++r.rows;
}

Status KvCache::append_rows(Group g, const KvCache& from, int n) {
  if (from.n_layer_ != n_layer_ || from.kv_dim_ != kv_dim_ || from.head_dim_ != head_dim_)
    return invalid_argument("cache rows copied between caches of different shapes");
  if (n < 0 || n > from.rows(g)) return out_of_range("more cache rows copied than the source cache holds");
  GPS_TRY(reserve(g, n));
  Region& r = region(g);
  const Region& f = from.region(g);
  const int64_t at = int64_t{r.rows} * kv_dim_, count = int64_t{n} * kv_dim_;
  for (int l = 0; l < n_layer_; ++l) {
    std::copy_n(f.k[l].begin(), count, r.k[l].begin() + at);
    std::copy_n(f.v[l].begin(), count, r.v[l].begin() + at);
  }
  r.pos.insert(r.pos.end(), f.pos.begin(), f.pos.begin() + n);
  r.rows += n;
  return {};
}

void KvCache::truncate(Group g, int n) {
  Region& r = region(g);
  GPS_ASSERT(n >= 0 && n <= r.rows, "truncate past the region");
  r.rows = n;
  r.pos.resize(n);
}

void KvCache::erase(Group g, int begin, int end) {
  Region& r = region(g);
  GPS_ASSERT(0 <= begin && begin <= end && end <= r.rows, "erase range outside the region");
  const int64_t tail = int64_t{r.rows - end} * kv_dim_;
  for (int l = 0; l < n_layer_; ++l) {
    std::copy_n(r.k[l].begin() + end * kv_dim_, tail, r.k[l].begin() + begin * kv_dim_);
    std::copy_n(r.v[l].begin() + end * kv_dim_, tail, r.v[l].begin() + begin * kv_dim_);
  }
  r.pos.erase(r.pos.begin() + begin, r.pos.begin() + end);
  r.rows -= end - begin;
}

void KvCache::rerotate(Group g, int begin, const float* new_positions, int n, const RopeFrequencies& rope) {
  Region& r = region(g);
  GPS_ASSERT(begin >= 0 && begin + n <= r.rows, "rerotate outside the region");
  for (int i = 0; i < n; ++i) {
    const int row = begin + i;
    for (int l = 0; l < n_layer_; ++l)
      rope.rerotate_row(r.k[l].data() + row * kv_dim_, n_head_kv_, r.pos[row], new_positions[i]);
    r.pos[row] = new_positions[i];
  }
}

void KvCache::clear() {
  for (Region& r : regions_) {
    r.rows = 0;
    r.pos.clear();
  }
}

void KvCache::shrink(int keep_rows) {
  for (Region& r : regions_) {
    const int cap = std::max(r.rows, std::max(keep_rows, 0));
    if (cap >= r.capacity) continue;
    for (int l = 0; l < n_layer_; ++l) {
      r.k[l].resize(static_cast<size_t>(cap) * kv_dim_);
      r.k[l].shrink_to_fit();
      r.v[l].resize(static_cast<size_t>(cap) * kv_dim_);
      r.v[l].shrink_to_fit();
    }
    r.pos.shrink_to_fit();
    r.capacity = cap;
  }
}

size_t KvCache::bytes() const {
  size_t b = 0;
  for (const Region& r : regions_)
    b += 2 * static_cast<size_t>(r.capacity) * kv_dim_ * n_layer_ * sizeof(float);
  return b;
}

}  // namespace gpstream::model
