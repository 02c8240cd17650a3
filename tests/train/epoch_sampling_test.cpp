// The shared data draws (train/epoch_sampling.h): each epoch's order is a permutation (every index once) that
// changes with the epoch and the seed and is the same for the same pair; it is the order the text trainer
// has always drawn (std::shuffle under mt19937_64 seeded from the seed and the epoch), so text runs keep
// their data order; wait-k draws stay in [k_min, k_max] and reach every value.
#include "train/epoch_sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "util/splitmix64.h"

namespace gpstream::train {
namespace {

std::vector<size_t> identity(size_t n) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), size_t{0});
  return v;
}

TEST(EpochShuffle, EachEpochIsAPermutation) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{1000}})
    for (int64_t epoch = 0; epoch < 5; ++epoch) {
      std::vector<size_t> order = EpochShuffle(3, epoch).order(n);
      ASSERT_EQ(order.size(), n);
      std::sort(order.begin(), order.end());
      EXPECT_EQ(order, identity(n)) << "n " << n << ", epoch " << epoch;
    }
}

TEST(EpochShuffle, DependsOnTheEpochAndTheSeedOnly) {
  const std::vector<size_t> base = EpochShuffle(3, 0).order(1000);
  EXPECT_EQ(EpochShuffle(3, 0).order(1000), base);
  EXPECT_NE(EpochShuffle(3, 1).order(1000), base);
  EXPECT_NE(EpochShuffle(4, 0).order(1000), base);
  EXPECT_NE(base, identity(1000));
}

// The order `gpstream train` drew before the draws were shared, written out: its runs keep their data order.
TEST(EpochShuffle, IsTheTextTrainersOrder) {
  for (uint64_t seed : {uint64_t{1}, uint64_t{7}, uint64_t{123456789}})
    for (int64_t epoch : {0, 1, 9}) {
      std::mt19937_64 rng(splitmix64_mix(seed + 0x51ED2701u * static_cast<uint64_t>(epoch + 1)));
      std::vector<size_t> order = identity(300);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<int> batches(40);
      std::iota(batches.begin(), batches.end(), 0);
      std::shuffle(batches.begin(), batches.end(),
                   rng);  // the dataset's batch order: the stream's next draws

      EpochShuffle shuffle(seed, epoch);
      EXPECT_EQ(shuffle.order(300), order);
      std::vector<int> shared_batches(40);
      std::iota(shared_batches.begin(), shared_batches.end(), 0);
      shuffle.shuffle(shared_batches);
      EXPECT_EQ(shared_batches, batches);
    }
}

TEST(SampleK, StaysInRangeAndReachesEveryValue) {
  std::set<int> seen;
  for (size_t item = 0; item < 500; ++item) {
    const int k = sample_k(5, 2, item, 3, 7);
    EXPECT_GE(k, 3);
    EXPECT_LE(k, 7);
    seen.insert(k);
  }
  EXPECT_EQ(seen, (std::set<int>{3, 4, 5, 6, 7}));
  EXPECT_EQ(sample_k(5, 2, 11, 4, 4), 4);
  int differ = 0;
  for (size_t item = 0; item < 100; ++item)
    differ += sample_k(5, 2, item, 1, 9) != sample_k(5, 3, item, 1, 9) ? 1 : 0;
  EXPECT_GT(differ, 50) << "the epoch should redraw k";
}

}  // namespace
}  // namespace gpstream::train
