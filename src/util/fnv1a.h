// FNV-1a, 64-bit (Fowler–Noll–Vo): a fast, platform-independent hash of bytes, for checksums that catch
// accidental corruption and for stable keys derived from names. Not a defence against deliberate tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpstream {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xCBF29CE484222325ull;
inline constexpr uint64_t kFnv1aPrime = 0x100000001B3ull;

// The hash of `bytes`, continuing from `h` (chain calls to hash pieces as one sequence).
template <typename Byte>
uint64_t fnv1a(std::span<const Byte> bytes, uint64_t h = kFnv1aOffsetBasis) {
  static_assert(sizeof(Byte) == 1, "fnv1a hashes bytes");
  for (Byte b : bytes) h = (h ^ static_cast<uint64_t>(static_cast<unsigned char>(b))) * kFnv1aPrime;
  return h;
}

}  // namespace gpstream
