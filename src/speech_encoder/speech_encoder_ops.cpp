// Causal strided convolution (im2col), RoPE frequencies and the chunk mask of the speech encoder.
#include "speech_encoder/speech_encoder_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/error.h"

namespace gpstream::speech_encoder {

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

}  // namespace gpstream::speech_encoder
