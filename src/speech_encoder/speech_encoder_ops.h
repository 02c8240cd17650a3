// Building blocks of the speech encoder that the kernel layer does not have: the causal strided
// convolution as im2col + linear (and its scatter back for the backward), the RoPE frequencies, the chunked
// causal attention mask (GELU: kernels/gelu.h; fp32 views of the parameter buffer: kernels/kernels.h). Shapes
// are row-major [rows, width].
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"

namespace gpstream::speech_encoder {

using kernels::f32_view;  // the encoder's parameters are one fp32 buffer (kernels/kernels.h)

inline constexpr int64_t kConvStride = 2;

// cols[t, k * width + c] = x[2 t + k - pad, c], or 0 when that row index is negative, for t < n_out and
// k < kernel. Every referenced row must be < n_rows (asserted). With pad = kernel - 2 output t covers rows
// [2t + 2 - kernel, 2t + 1]: the causal convolution of docs/speech.md.
void conv_im2col(float* cols, const float* x, int64_t n_rows, int64_t width, int64_t kernel, int64_t pad,
                 int64_t n_out);
// The adjoint: dx[2 t + k - pad, c] += dcols[t, k * width + c] (rows with negative index dropped).
void conv_col2im_add(float* dx, const float* dcols, int64_t n_rows, int64_t width, int64_t kernel,
                     int64_t pad, int64_t n_out);

// inv_freq[i] = theta^(-2i / head_dim), i < head_dim / 2, computed in double.
std::vector<float> rope_inv_freq(int64_t head_dim, double theta);

// Chunk of encoder frame t, and the first frame a frame of chunk c sees (left_chunks = 0: frame 0).
inline int64_t chunk_of(int64_t t, int64_t chunk_frames) {
  return t / chunk_frames;
}
int64_t first_visible_frame(int64_t chunk, int64_t chunk_frames, int64_t left_chunks);

// Additive mask [n, n] (0 visible, -inf hidden): frame i sees frame j iff chunk(j) <= chunk(i) and
// j >= first_visible_frame(chunk(i)). row_end[i] = one past the last frame i sees.
void chunk_attention_mask(float* mask, int32_t* row_end, int64_t n, int64_t chunk_frames,
                          int64_t left_chunks);

}  // namespace gpstream::speech_encoder
