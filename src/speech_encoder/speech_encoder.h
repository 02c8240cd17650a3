// Whole-utterance forward and backward of the speech encoder + projector (docs/speech.md): the training
// path and the reference that the streaming encoder (speech_encoder_stream.h) must reproduce. For n log-mel
// frames x [n, n_mels]:
//   x' = (x + mel_shift) * mel_scale                      (fixed input normalisation)
//   y1 = gelu(conv1(x'))       [T1 = n/2, conv_channels]    conv: causal, kernel K, stride 2
//   z  = gelu(conv2(y1))       [T2 = T1/2, d_model]         one encoder frame per 40 ms
//   per layer (pre-RMSNorm, RoPE at position t = frame index, chunked causal mask):
//     h = rms(z) w_attn;  z += W_o attn(rope(W_q h), rope(W_k h), W_v h)
//     with conv_module_kernel > 0:  h = rms(z) w_conv;  z += W_pw2 silu(dwconv(glu(W_pw1 h)))   (causal
//     dwconv) h = rms(z) w_ffn;   z += W_down (silu(W_gate h) * W_up h)
//   e  = rms(z) w_norm                                      [T2, d_model]
//   s  = e stacked by `stack` rows (trailing partial stack dropped)   [T3 = T2/stack, stack * d_model]
//   out = fc2(gelu(fc1(s)))                                 [T3, llm_hidden]
// gelu is the tanh form (kernels/gelu.h). The forward keeps every activation the backward needs (llm.c
// style); backward() adds the parameter gradients into a buffer laid out like the model's values.
#pragma once

#include <cstdint>
#include <vector>

#include "speech_encoder/speech_encoder_params.h"

namespace gpstream::speech_encoder {

class SpeechEncoderPass {
 public:
  explicit SpeechEncoderPass(const SpeechEncoderModel& model, int n_threads = 1);

  // Runs the whole utterance (n_frames x n_mels floats); returns output rows (llm_hidden floats each),
  // valid until the next forward(). Zero rows when the utterance is too short.
  const std::vector<float>& forward(const float* mel, int64_t n_frames);
  int64_t rows() const { return t3_; }
  int64_t encoder_frames() const { return t2_; }
  // Encoder output before the projector (e, [T2, d_model]).
  const std::vector<float>& encoder_output() const { return e_; }

  // Gradients of the last forward for d_out = dLoss/dout ([rows(), llm_hidden]), ADDED into grads
  // (model.size() floats, same offsets as the model's values). d_encoder_output, if not null, is a further
  // dLoss/de ([encoder_frames(), d_model]) from a loss on encoder_output() (an auxiliary CTC head).
  // d_out may be null when only that loss trains the encoder (the projector then gets no gradient).
  void backward(const float* d_out, float* grads, const float* d_encoder_output = nullptr);

 private:
  struct LayerActs {
    std::vector<float> x, h1, q, k, v, att, x_mid, h2, gate, up, act, probs;
    std::vector<float> h3, pw1, gpad, cv, s, x_conv;  // the convolution module's (empty without it)
  };
  void linear(float* y, const float* x, size_t w, size_t b, int64_t rows, int64_t out, int64_t in);

  const SpeechEncoderModel& model_;
  int n_threads_;
  int64_t n_ = 0, t1_ = 0, t2_ = 0, t3_ = 0;
  std::vector<float> mel_;
  std::vector<float> cols1_, pre1_, y1_, cols2_, pre2_;
  std::vector<LayerActs> layers_;
  std::vector<float> x_final_, e_, hid_pre_, hid_, out_;
  std::vector<float> mask_, cos_, sin_;
  std::vector<int32_t> row_end_;
  std::vector<float> inv_freq_;
};

}  // namespace gpstream::speech_encoder
