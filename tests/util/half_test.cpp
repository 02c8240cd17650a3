// half.h: fp32 <-> F16 / BF16 against values derived by hand from the formats (sign, exponent bias 15
// or 127, 10 or 7 mantissa bits), round-to-nearest-even ties, subnormals, inf and NaN; exhaustive
// round trips; and, where the CPU has F16C, the hardware conversion as a second implementation.
#include "util/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace gpstream {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Half, F16ToF32HandValues) {
  EXPECT_EQ(bits(f16_to_f32(0x0000)), 0x00000000u);
  EXPECT_EQ(bits(f16_to_f32(0x8000)), 0x80000000u);  // -0 keeps its sign
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x3800), 0.5f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);               // largest finite: (2 - 2^-10) * 2^15
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);        // (1 + 341/1024) * 2^-2
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x0200), std::ldexp(1.0f, -15));  // subnormal 512 * 2^-24
  EXPECT_EQ(f16_to_f32(0x03ff), 1023.0f * std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7c00), INFINITY);
  EXPECT_EQ(f16_to_f32(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));  // signalling NaN stays a NaN, not inf
  EXPECT_TRUE(std::isnan(f16_to_f32(0xffff)));
}

TEST(Half, F32ToF16HandValues) {
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(f32_to_f16(INFINITY), 0x7c00);
  EXPECT_EQ(f32_to_f16(-INFINITY), 0xfc00);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);  // overflow → inf
  EXPECT_EQ(f32_to_f16(-1e6f), 0xfc00);
  const uint16_t nan = f32_to_f16(NAN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  // A NaN whose payload sits only in the low mantissa bits must not turn into inf.
  const uint16_t low_nan = f32_to_f16(from_bits(0x7f800001u));
  EXPECT_EQ(low_nan & 0x7c00, 0x7c00);
  EXPECT_NE(low_nan & 0x03ff, 0);
}

TEST(Half, F32ToF16RoundsTiesToEven) {
  // Normals near 1 (spacing 2^-10): exactly half way rounds to the even mantissa.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // 1 | 1+2^-10 → 1 (even)
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // 1+2^-10 | 1+2^-9 → 0x3c02 (even)
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);  // just above half
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)), 0x3c00);  // just below half
  // Spacing 2 at 2048: 2049 → 2048 (0x6800), 2051 → 2052 (0x6802).
  EXPECT_EQ(f32_to_f16(2049.0f), 0x6800);
  EXPECT_EQ(f32_to_f16(2051.0f), 0x6802);
  // Rounding that carries into the exponent: 2 - 2^-11 is half way between 0x3bff and 2.0 (0x4000).
  EXPECT_EQ(f32_to_f16(2.0f - std::ldexp(1.0f, -11)), 0x4000);
  // The overflow threshold: 65520 is half way between 65504 (odd mantissa) and 65536 → inf.
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
}

TEST(Half, F32ToF16Subnormals) {
  const float u = std::ldexp(1.0f, -24);  // one unit of the subnormal grid
  EXPECT_EQ(f32_to_f16(u), 0x0001);
  EXPECT_EQ(f32_to_f16(-u), 0x8001);
  EXPECT_EQ(f32_to_f16(0.5f * u), 0x0000);  // tie 0 | 1 → 0 (even)
  EXPECT_EQ(f32_to_f16(0.75f * u), 0x0001);
  EXPECT_EQ(f32_to_f16(0.25f * u), 0x0000);
  EXPECT_EQ(f32_to_f16(1.5f * u), 0x0002);  // tie 1 | 2 → 2
  EXPECT_EQ(f32_to_f16(2.5f * u), 0x0002);  // tie 2 | 3 → 2
  EXPECT_EQ(f32_to_f16(1023.0f * u), 0x03ff);
  EXPECT_EQ(f32_to_f16(1023.5f * u), 0x0400);  // tie at the top of the subnormals → smallest normal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(f32_to_f16(from_bits(0x00000001u)), 0x0000);                         // an fp32 subnormal
  EXPECT_EQ(bits(f16_to_f32(f32_to_f16(-std::ldexp(1.0f, -30)))), 0x80000000u);  // underflow keeps the sign
}

TEST(Half, Bf16HandValues) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(bf16_to_f32(0x4049), 3.140625f);  // (1 + 73/128) * 2
  EXPECT_EQ(bf16_to_f32(0x7f80), INFINITY);
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));  // bits 0x00010000: 2^16 * 2^-149
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));

  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(3.14159265f), 0x4049);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xff80);
  // Ties (spacing 2^-7 at 1): to even.
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  // The largest float rounds up to inf, as PyTorch's bfloat16 conversion does.
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7f7fffu)), 0x7f7f);
  // fp32 subnormals: ties to even on the bf16 grid too.
  EXPECT_EQ(f32_to_bf16(from_bits(0x00008000u)), 0x0000);
  EXPECT_EQ(f32_to_bf16(from_bits(0x00018000u)), 0x0002);
  // NaN stays NaN (quiet), also when its payload is only in the 16 bits that are dropped.
  for (uint32_t n : {0x7fc00000u, 0x7f800001u, 0xff800100u}) {
    const uint16_t h = f32_to_bf16(from_bits(n));
    EXPECT_EQ(h & 0x7f80, 0x7f80) << std::hex << n;
    EXPECT_NE(h & 0x007f, 0) << std::hex << n;
    EXPECT_EQ(h & 0x8000, (n >> 16) & 0x8000) << std::hex << n;
  }
}

TEST(Half, EveryF16AndBf16ValueRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7c00, 0x7c00u);
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
    const float g = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(g)) {
      ASSERT_EQ(f32_to_bf16(g), h) << std::hex << h;
    }
  }
}

TEST(Half, Bf16RoundingMatchesADirectDefinition) {
  // Round to nearest even on the top 16 bits, written from the definition with the discarded bits.
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = rng();
    if ((u & 0x7fffffffu) > 0x7f800000u) continue;  // NaN: checked above
    const uint32_t hi = u >> 16, lo = u & 0xffffu;
    uint32_t want = hi;
    if (lo > 0x8000u || (lo == 0x8000u && (hi & 1u))) ++want;
    ASSERT_EQ(f32_to_bf16(from_bits(u)), static_cast<uint16_t>(want)) << std::hex << u;
  }
}

#if defined(__F16C__)
TEST(Half, F16MatchesTheHardwareConversion) {
  // F16C (vcvtps2ph / vcvtph2ps) is an independent IEEE implementation of both directions.
  std::mt19937 rng(5);
  for (int i = 0; i < 400000; ++i) {
    uint32_t u = rng();
    if (i % 2) u = (u & 0x80000000u) | (0x33000000u + u % 0x14800000u);  // concentrate on the f16 range
    const float f = from_bits(u);
    if (std::isnan(f)) continue;
    const uint16_t hw = static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
    ASSERT_EQ(f32_to_f16(f), hw) << std::hex << u;
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    const float sw = f16_to_f32(static_cast<uint16_t>(h)), hw = _cvtsh_ss(static_cast<uint16_t>(h));
    if (std::isnan(hw)) {
      EXPECT_TRUE(std::isnan(sw));
    } else {
      ASSERT_EQ(bits(sw), bits(hw)) << std::hex << h;
    }
  }
}
#endif

}  // namespace
}  // namespace gpstream
