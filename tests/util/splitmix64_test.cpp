// SplitMix64 against the published sequence for seed 1234567 (Vigna's splitmix64.c; recomputed with a
// separate Python implementation), and the bounded draw's range.
#include "util/splitmix64.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpstream {
namespace {

TEST(SplitMix64, PublishedSequence) {
  SplitMix64 rng(1234567);
  EXPECT_EQ(rng.next(), 6457827717110365317ull);
  EXPECT_EQ(rng.next(), 3203168211198807973ull);
  EXPECT_EQ(rng.next(), 9817491932198370423ull);
  // The mixer is one step of a generator whose state is its argument.
  EXPECT_EQ(splitmix64_mix(1234567), 6457827717110365317ull);
}

TEST(SplitMix64, UniformAndBelowStayInRangeAndCoverIt) {
  SplitMix64 rng(7);
  std::vector<int> seen(5, 0);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const uint64_t b = rng.below(5);
    ASSERT_LT(b, 5u);
    ++seen[b];
  }
  for (int c : seen) EXPECT_GT(c, 150);  // 200 expected each
  EXPECT_EQ(rng.below(1), 0u);
}

}  // namespace
}  // namespace gpstream
