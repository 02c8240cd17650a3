// GLU, causal depthwise convolution and SiLU for the speech encoder's convolution module, with adjoints.
#include "speech_encoder/conv_module_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpstream::speech_encoder {
namespace {

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

}  // namespace

void glu_forward(float* out, const float* a, int64_t n, int64_t width) {
  for (int64_t t = 0; t < n; ++t) {
    const float* row = a + t * 2 * width;
    float* o = out + t * width;
    for (int64_t i = 0; i < width; ++i) o[i] = row[i] * sigmoid(row[width + i]);
  }
}

void glu_backward(float* d_a, const float* d_out, const float* a, int64_t n, int64_t width) {
  for (int64_t t = 0; t < n; ++t) {
    const float* row = a + t * 2 * width;
    const float* d = d_out + t * width;
    float* da = d_a + t * 2 * width;
    for (int64_t i = 0; i < width; ++i) {
      const float s = sigmoid(row[width + i]);
      da[i] = d[i] * s;
      da[width + i] = d[i] * row[i] * s * (1.0f - s);
    }
  }
}

void depthwise_conv_causal(float* out, const float* in, int64_t n_out, int64_t width, const float* w,
                           int64_t kernel) {
  // w transposed to [kernel, width], so that every loop below runs over contiguous channels.
  std::vector<float> wt(static_cast<size_t>(kernel * width));
  for (int64_t c = 0; c < width; ++c)
    for (int64_t j = 0; j < kernel; ++j) wt[static_cast<size_t>(j * width + c)] = w[c * kernel + j];
  for (int64_t t = 0; t < n_out; ++t) {
    float* o = out + t * width;
    std::fill(o, o + width, 0.0f);
    for (int64_t j = 0; j < kernel; ++j) {
      const float* x = in + (t + j) * width;
      const float* wj = wt.data() + j * width;
      for (int64_t c = 0; c < width; ++c) o[c] += wj[c] * x[c];
    }
  }
}

void depthwise_conv_causal_backward(float* d_in, float* d_w, const float* d_out, const float* in,
                                    int64_t n_out, int64_t width, const float* w, int64_t kernel) {
  std::vector<float> wt(static_cast<size_t>(kernel * width)), dwt(wt.size(), 0.0f);
  for (int64_t c = 0; c < width; ++c)
    for (int64_t j = 0; j < kernel; ++j) wt[static_cast<size_t>(j * width + c)] = w[c * kernel + j];
  for (int64_t t = 0; t < n_out; ++t) {
    const float* d = d_out + t * width;
    for (int64_t j = 0; j < kernel; ++j) {
      const float* x = in + (t + j) * width;
      const float* wj = wt.data() + j * width;
      float* dx = d_in + (t + j) * width;
      float* dwj = dwt.data() + j * width;
      for (int64_t c = 0; c < width; ++c) {
        dx[c] += d[c] * wj[c];
        dwj[c] += d[c] * x[c];
      }
    }
  }
  for (int64_t c = 0; c < width; ++c)
    for (int64_t j = 0; j < kernel; ++j) d_w[c * kernel + j] += dwt[static_cast<size_t>(j * width + c)];
}

void silu_rows(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * sigmoid(x[i]);
}

void silu_backward_rows(float* d_x, const float* d_out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = sigmoid(x[i]);
    d_x[i] = d_out[i] * s * (1.0f + x[i] * (1.0f - s));
  }
}

}  // namespace gpstream::speech_encoder
