// Causal strided convolution (im2col), GELU, RoPE frequencies and the chunk mask of the speech encoder.
#include "audio/speech_encoder_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/fast_exp.h"
#include "util/error.h"

namespace gpstream::audio {

void conv_im2col(float* cols, const float* x, int64_t n_rows, int64_t width, int64_t kernel, int64_t pad,
                 int64_t n_out) {
  for (int64_t t = 0; t < n_out; ++t) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t r = kConvStride * t + k - pad;
      float* dst = cols + (t * kernel + k) * width;
      if (r < 0) {
        std::fill(dst, dst + width, 0.0f);
      } else {
        GPS_ASSERT(r < n_rows, "conv_im2col: window past the input");
        std::memcpy(dst, x + r * width, static_cast<size_t>(width) * sizeof(float));
      }
    }
  }
}

void conv_col2im_add(float* dx, const float* dcols, int64_t n_rows, int64_t width, int64_t kernel,
                     int64_t pad, int64_t n_out) {
  for (int64_t t = 0; t < n_out; ++t) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t r = kConvStride * t + k - pad;
      if (r < 0) continue;
      GPS_ASSERT(r < n_rows, "conv_col2im_add: window past the input");
      const float* src = dcols + (t * kernel + k) * width;
      float* dst = dx + r * width;
      for (int64_t c = 0; c < width; ++c) dst[c] += src[c];
    }
  }
}

// GELU's tanh form through a sigmoid: 0.5 (1 + tanh u) = s = 1 / (1 + exp(-2u)), u = k (x + c x^3), so
//   gelu(x) = x s,   gelu'(x) = s + x s (1 - s) 2k (1 + 3c x^2),
// one fast_exp per value instead of libm's tanh (which does not vectorize; it was ~5 % of a training step).
namespace {

constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluC = 0.044715f;

float gelu_sigmoid(float x) {
  return 1.0f / (1.0f + kernels::fast_exp(-2.0f * kGeluK * (x + kGeluC * x * x * x)));
}
float gelu_slope(float x, float s) {
  return s + x * s * (1.0f - s) * 2.0f * kGeluK * (1.0f + 3.0f * kGeluC * x * x);
}

#if defined(__AVX2__) && defined(__FMA__)
__m256 gelu_sigmoid8(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 u = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, _mm256_set1_ps(kGeluC), _mm256_set1_ps(1.0f)));
  const __m256 e = kernels::fast_exp8(_mm256_mul_ps(u, _mm256_set1_ps(-2.0f * kGeluK)));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
#endif

}  // namespace

void gelu_forward(float* y, const float* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, gelu_sigmoid8(v)));
  }
#endif
  for (; i < n; ++i) y[i] = x[i] * gelu_sigmoid(x[i]);
}

void gelu_backward(float* dx, const float* dy, const float* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 one = _mm256_set1_ps(1.0f), c3 = _mm256_set1_ps(3.0f * kGeluC);
  const __m256 k2 = _mm256_set1_ps(2.0f * kGeluK);
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i), s = gelu_sigmoid8(v);
    // s + x s (1 - s) 2k (1 + 3c x^2)
    const __m256 poly = _mm256_mul_ps(k2, _mm256_fmadd_ps(_mm256_mul_ps(v, v), c3, one));
    const __m256 slope = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(v, s), _mm256_sub_ps(one, s)), poly, s);
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_loadu_ps(dy + i), slope));
  }
#endif
  for (; i < n; ++i) dx[i] = dy[i] * gelu_slope(x[i], gelu_sigmoid(x[i]));
}

std::vector<float> rope_inv_freq(int64_t head_dim, double theta) {
  std::vector<float> inv(static_cast<size_t>(head_dim / 2));
  for (size_t i = 0; i < inv.size(); ++i)
    inv[i] =
        static_cast<float>(std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim)));
  return inv;
}

int64_t first_visible_frame(int64_t chunk, int64_t chunk_frames, int64_t left_chunks) {
  if (left_chunks <= 0) return 0;
  return std::max<int64_t>(0, chunk - left_chunks) * chunk_frames;
}

void chunk_attention_mask(float* mask, int32_t* row_end, int64_t n, int64_t chunk_frames,
                          int64_t left_chunks) {
  const float hidden = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = chunk_of(i, chunk_frames);
    const int64_t begin = first_visible_frame(c, chunk_frames, left_chunks);
    const int64_t end = std::min(n, (c + 1) * chunk_frames);
    float* row = mask + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = (j >= begin && j < end) ? 0.0f : hidden;
    row_end[i] = static_cast<int32_t>(end);
  }
}

}  // namespace gpstream::audio
