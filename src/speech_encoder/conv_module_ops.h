// The pieces of the speech encoder's convolution module (docs/speech.md, "Convolution module") that the
// kernel layer does not have, each with its adjoint: the gated linear unit, the causal depthwise
// convolution over time and SiLU over a whole buffer. Shapes are row-major [rows, width].
#pragma once

#include <cstdint>

namespace gpstream::speech_encoder {

// GLU: out[t, i] = a[t, i] * sigmoid(a[t, width + i]); a is [n, 2 width], out [n, width].
void glu_forward(float* out, const float* a, int64_t n, int64_t width);
// d_a [n, 2 width] = the GLU's input gradient for d_out [n, width] (overwritten, not added).
void glu_backward(float* d_a, const float* d_out, const float* a, int64_t n, int64_t width);

// Causal depthwise convolution over time: out[t, c] = sum_{j < kernel} w[c, j] * in[t + j, c] for t < n_out.
// `in` has n_out + kernel - 1 rows: the kernel - 1 rows before output 0's own row come first (zeros at the
// start of an utterance, the previous rows when streaming), so out[t] sees its own row and kernel - 1 before.
void depthwise_conv_causal(float* out, const float* in, int64_t n_out, int64_t width, const float* w,
                           int64_t kernel);
// The adjoint: d_in[t + j, c] += d_out[t, c] * w[c, j] and d_w[c, j] += sum_t d_out[t, c] * in[t + j, c].
void depthwise_conv_causal_backward(float* d_in, float* d_w, const float* d_out, const float* in,
                                    int64_t n_out, int64_t width, const float* w, int64_t kernel);

// out[i] = x[i] * sigmoid(x[i]) (out may alias x); d_x[i] = d_out[i] * silu'(x[i]) (d_x may alias d_out).
void silu_rows(float* out, const float* x, int64_t n);
void silu_backward_rows(float* d_x, const float* d_out, const float* x, int64_t n);

}  // namespace gpstream::speech_encoder
