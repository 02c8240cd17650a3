// RoPE tables and rotation.
#include "kernels/rope.h"

#include <cmath>

namespace gpstream::kernels {

void rope_table(float* cos_out, float* sin_out, const float* positions, const float* inv_freq, int64_t n_tok,
                int64_t half, float scale) {
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(positions[t]) * static_cast<double>(inv_freq[i]);
      cos_out[t * half + i] = static_cast<float>(std::cos(angle)) * scale;
      sin_out[t * half + i] = static_cast<float>(std::sin(angle)) * scale;
    }
  }
}

void rope_apply(float* x, int64_t ld, const float* cos_t, const float* sin_t, int64_t n_tok, int64_t n_heads,
                int64_t head_dim, float sign, int64_t rot_dim) {
  const int64_t half = (rot_dim > 0 ? rot_dim : head_dim) / 2;
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* c = cos_t + t * half;
    const float* s = sin_t + t * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + t * ld + h * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        const float si = sign * s[i];
        v[i] = a * c[i] - b * si;
        v[i + half] = b * c[i] + a * si;
      }
    }
  }
}

}  // namespace gpstream::kernels
