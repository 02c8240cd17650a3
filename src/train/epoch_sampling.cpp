// Epoch shuffles and per-example draws (epoch_sampling.h).
#include "train/epoch_sampling.h"

#include <numeric>

#include "train/run_folder.h"

namespace gpstream::train {

EpochShuffle::EpochShuffle(uint64_t seed, int64_t epoch)
    : rng_(mix_seed(seed + kEpochSeedStride * static_cast<uint64_t>(epoch + 1))) {}

std::vector<size_t> EpochShuffle::order(size_t n) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  shuffle(order);
  return order;
}

uint64_t item_draw(uint64_t seed, int64_t epoch, size_t item) {
  return mix_seed(seed ^ mix_seed(static_cast<uint64_t>(epoch) * kItemDrawEpochStride + item));
}

int sample_k(uint64_t seed, int64_t epoch, size_t item, int k_min, int k_max) {
  if (k_min >= k_max) return k_min;
  return k_min + static_cast<int>(item_draw(seed, epoch, item) % static_cast<uint64_t>(k_max - k_min + 1));
}

}  // namespace gpstream::train
