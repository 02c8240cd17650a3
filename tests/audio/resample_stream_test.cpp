// ResampleStream against resample() over the whole signal: bit for bit, for every chunking and rate pair.
#include "audio/resample_stream.h"

#include <gtest/gtest.h>

#include <random>

#include "audio/resample.h"

namespace gpstream::audio {
namespace {

std::vector<float> noise(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  return x;
}

// Streams x in pieces of the given sizes (cycled; 0 = random 1..3000) and returns every output.
std::vector<float> stream(const std::vector<float>& x, uint32_t from, uint32_t to, size_t piece) {
  auto rs = ResampleStream::create(from, to);
  EXPECT_TRUE(rs.ok());
  std::mt19937 rng(from ^ to);
  std::vector<float> out;
  for (size_t i = 0; i < x.size();) {
    const size_t n =
        std::min(x.size() - i, piece ? piece : std::uniform_int_distribution<size_t>(1, 3000)(rng));
    const size_t before = out.size();
    const size_t added = rs->push({x.data() + i, n}, out);
    EXPECT_EQ(added, out.size() - before);
    i += n;
  }
  rs->finish(out);
  EXPECT_EQ(rs->samples_in(), x.size());
  EXPECT_EQ(rs->samples_out(), out.size());
  return out;
}

TEST(ResampleStream, EqualsWholeSignalResampleBitForBit) {
  // Small pieces over a short signal (each push resamples about a kernel width), larger ones over a longer
  // one.
  const std::vector<float> long_x = noise(6001, 3), short_x = noise(500, 4);
  for (auto [from, to] : std::vector<std::pair<uint32_t, uint32_t>>{{44100, 16000},
                                                                    {48000, 16000},
                                                                    {8000, 16000},
                                                                    {22050, 16000},
                                                                    {16000, 16000},
                                                                    {11025, 16000},
                                                                    {16000, 8000}}) {
    for (size_t piece : {size_t{1}, size_t{7}, size_t{441}, size_t{1000}, size_t{0}, long_x.size()}) {
      const std::vector<float>& x = piece <= 7 ? short_x : long_x;
      auto whole = resample(x, from, to);
      ASSERT_TRUE(whole.ok());
      const std::vector<float> got = stream(x, from, to, piece);
      ASSERT_EQ(got.size(), whole->size()) << from << " -> " << to << " piece " << piece;
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], (*whole)[i]) << from << " -> " << to << " piece " << piece << " sample " << i;
    }
  }
}

TEST(ResampleStream, EmitsAsSoonAsTheKernelIsCovered) {
  auto rs = ResampleStream::create(48000, 16000);
  ASSERT_TRUE(rs.ok());
  std::vector<float> out;
  rs->push(noise(48000, 1), out);  // one second in: all but about a kernel width out already
  EXPECT_GT(out.size(), 16000u - 20u);
  EXPECT_LT(out.size(), 16000u);
  rs->finish(out);
  EXPECT_EQ(out.size(), 16000u);
  EXPECT_EQ(rs->finish(out), 0u);
}

TEST(ResampleStream, RefusesBadRates) {
  EXPECT_FALSE(ResampleStream::create(0, 16000).ok());
  EXPECT_FALSE(ResampleStream::create(16000, 2000000).ok());
}

}  // namespace
}  // namespace gpstream::audio
