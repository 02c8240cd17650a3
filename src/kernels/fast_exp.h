// A vectorizable single-precision exp for softmax-type loops (attention, cross-entropy in training):
// Cody–Waite range reduction and a degree-6 polynomial (Cephes expf), relative error ~2e-7 on
// [-87, 88]; inputs at or below -87.3 (including -inf from masks) give 0, above 88 give 2^128-ish.
// Plain arithmetic, so GCC auto-vectorizes loops that call it (libm's expf does not vectorize).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpstream::kernels {

inline float fast_exp(float x) {
  x = x < -88.0f ? -88.0f : (x > 88.0f ? 88.0f : x);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t e = static_cast<int32_t>(n) + 127;
  const int32_t bits = (e > 0 ? e : 0) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return y * scale;
}

}  // namespace gpstream::kernels
