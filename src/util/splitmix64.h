// SplitMix64 (Steele, Lea & Flood, 2014): gpstream's seeded generator wherever the bits must be the same on
// every platform and standard library (std::uniform_*_distribution and std::normal_distribution are
// implementation-defined). A 64-bit counter advanced by the golden-ratio constant and passed through a
// mixing function; the mixing function alone (splitmix64_mix) turns structured seeds into decorrelated ones.
#pragma once

#include <cstdint>

namespace gpstream {

inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

// The finaliser: a bijection of 64-bit words with good avalanche.
inline uint64_t splitmix64_finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One generator step from state x: the finaliser of x + gamma (a seed mixer for counters and hashes).
inline uint64_t splitmix64_mix(uint64_t x) {
  return splitmix64_finalize(x + kSplitMix64Gamma);
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64_finalize(state_ += kSplitMix64Gamma); }
  // Uniform in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) without modulo bias (Lemire 2019); n > 0.
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace gpstream
