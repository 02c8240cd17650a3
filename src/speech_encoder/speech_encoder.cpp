// SpeechEncoderPass: the whole-utterance forward with saved activations and the hand-written backward.
#include "speech_encoder/speech_encoder.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/activation.h"
#include "kernels/activation_backward.h"
#include "kernels/attention_backward.h"
#include "kernels/linear.h"
#include "kernels/linear_backward.h"
#include "kernels/norm.h"
#include "kernels/norm_backward.h"
#include "kernels/rope.h"
#include "speech_encoder/conv_module_ops.h"
#include "speech_encoder/speech_encoder_ops.h"

namespace gpstream::speech_encoder {
namespace {

void resize(std::vector<float>& v, int64_t n) {
  v.assign(static_cast<size_t>(std::max<int64_t>(n, 0)), 0.0f);
}

}  // namespace

SpeechEncoderPass::SpeechEncoderPass(const SpeechEncoderModel& model, int n_threads)
    : model_(model), n_threads_(std::max(1, n_threads)) {
  const auto& c = model_.config();
  layers_.resize(static_cast<size_t>(c.n_layer));
  inv_freq_ = rope_inv_freq(c.head_dim(), c.rope_theta);
}

void SpeechEncoderPass::linear(float* y, const float* x, size_t w, size_t b, int64_t rows, int64_t out,
                               int64_t in) {
  if (rows == 0) return;
  const float* P = model_.data();
  kernels::linear_forward(y, out, x, in, f32_view(P + w, out, in), P + b, rows, nullptr, n_threads_);
}

const std::vector<float>& SpeechEncoderPass::forward(const float* mel, int64_t n_frames) {
  const auto& c = model_.config();
  const auto& O = model_.offsets();
  const float* P = model_.data();
  const int64_t K = c.conv_kernel, M = c.n_mels, C = c.conv_channels, D = c.d_model, F = c.n_ff;
  const int64_t H = c.n_head, HD = c.head_dim(), KC = c.conv_module_kernel;
  kernels::set_blas_threads(n_threads_);  // else OpenBLAS uses every core for the small GEMMs
  n_ = std::max<int64_t>(n_frames, 0);
  t1_ = n_ / 2;
  t2_ = t1_ / 2;
  t3_ = t2_ / c.stack;
  mel_.resize(static_cast<size_t>(n_ * M));
  for (size_t i = 0; i < mel_.size(); ++i) mel_[i] = (mel[i] + c.mel_shift) * c.mel_scale;

  // Subsampling.
  resize(cols1_, t1_ * K * M);
  resize(pre1_, t1_ * C);
  resize(y1_, t1_ * C);
  conv_im2col(cols1_.data(), mel_.data(), n_, M, K, K - 2, t1_);
  linear(pre1_.data(), cols1_.data(), O.conv1_w, O.conv1_b, t1_, C, K * M);
  kernels::gelu_tanh_rows(y1_.data(), pre1_.data(), t1_ * C);
  resize(cols2_, t2_ * K * C);
  resize(pre2_, t2_ * D);
  conv_im2col(cols2_.data(), y1_.data(), t1_, C, K, K - 2, t2_);
  linear(pre2_.data(), cols2_.data(), O.conv2_w, O.conv2_b, t2_, D, K * C);

  // Chunk mask and RoPE tables over the T2 encoder frames.
  const int64_t T = t2_;
  resize(mask_, T * T);
  row_end_.assign(static_cast<size_t>(T), 0);
  chunk_attention_mask(mask_.data(), row_end_.data(), T, c.chunk_frames, c.left_chunks);
  std::vector<float> positions(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) positions[static_cast<size_t>(t)] = static_cast<float>(t);
  resize(cos_, T * HD / 2);
  resize(sin_, T * HD / 2);
  kernels::rope_table(cos_.data(), sin_.data(), positions.data(), inv_freq_.data(), T, HD / 2);

  const float scale = 1.0f / std::sqrt(static_cast<float>(HD));
  std::vector<float> x(static_cast<size_t>(T * D));
  kernels::gelu_tanh_rows(x.data(), pre2_.data(), T * D);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const auto& L = O.layers[static_cast<size_t>(il)];
    LayerActs& a = layers_[static_cast<size_t>(il)];
    a.x = x;
    for (auto* v : {&a.h1, &a.q, &a.k, &a.v, &a.att, &a.x_mid, &a.h2}) resize(*v, T * D);
    for (auto* v : {&a.gate, &a.up, &a.act}) resize(*v, T * F);
    resize(a.probs, H * T * T);
    for (auto* v : {&a.h3, &a.cv, &a.s, &a.x_conv}) resize(*v, KC > 0 ? T * D : 0);
    resize(a.pw1, KC > 0 ? T * 2 * D : 0);
    resize(a.gpad, KC > 0 ? (T + KC - 1) * D : 0);  // the first KC - 1 rows stay zero: causal padding
    if (T > 0) {
      kernels::rmsnorm_forward(a.h1.data(), D, a.x.data(), D, P + L.attn_norm, T, D, c.norm_eps);
      kernels::linear_forward(a.q.data(), D, a.h1.data(), D, f32_view(P + L.wq, D, D), nullptr, T, nullptr,
                              n_threads_);
      kernels::linear_forward(a.k.data(), D, a.h1.data(), D, f32_view(P + L.wk, D, D), nullptr, T, nullptr,
                              n_threads_);
      kernels::linear_forward(a.v.data(), D, a.h1.data(), D, f32_view(P + L.wv, D, D), nullptr, T, nullptr,
                              n_threads_);
      kernels::rope_apply(a.q.data(), D, cos_.data(), sin_.data(), T, H, HD);
      kernels::rope_apply(a.k.data(), D, cos_.data(), sin_.data(), T, H, HD);
      // One head per thread (disjoint columns of att, own probs).
#pragma omp parallel for num_threads(n_threads_) schedule(static)
      for (int64_t h = 0; h < H; ++h)
        kernels::attention_forward_seq(a.att.data() + h * HD, D, a.probs.data() + h * T * T,
                                       a.q.data() + h * HD, D, a.k.data() + h * HD, a.v.data() + h * HD, D,
                                       mask_.data(), T, HD, scale, row_end_.data());
      kernels::linear_forward(a.x_mid.data(), D, a.att.data(), D, f32_view(P + L.wo, D, D), nullptr, T,
                              nullptr, n_threads_);
      for (int64_t i = 0; i < T * D; ++i) a.x_mid[static_cast<size_t>(i)] += a.x[static_cast<size_t>(i)];
      if (KC > 0) {  // x_conv = x_mid + W_pw2 silu(dwconv(glu(W_pw1 rms(x_mid))))
        kernels::rmsnorm_forward(a.h3.data(), D, a.x_mid.data(), D, P + L.conv_norm, T, D, c.norm_eps);
        kernels::linear_forward(a.pw1.data(), 2 * D, a.h3.data(), D, f32_view(P + L.conv_pw1, 2 * D, D),
                                nullptr, T, nullptr, n_threads_);
        glu_forward(a.gpad.data() + (KC - 1) * D, a.pw1.data(), T, D);
        depthwise_conv_causal(a.cv.data(), a.gpad.data(), T, D, P + L.conv_dw, KC);
        silu_rows(a.s.data(), a.cv.data(), T * D);
        kernels::linear_forward(a.x_conv.data(), D, a.s.data(), D, f32_view(P + L.conv_pw2, D, D), nullptr, T,
                                nullptr, n_threads_);
        for (int64_t i = 0; i < T * D; ++i)
          a.x_conv[static_cast<size_t>(i)] += a.x_mid[static_cast<size_t>(i)];
      }
      const std::vector<float>& ffn_in = KC > 0 ? a.x_conv : a.x_mid;
      kernels::rmsnorm_forward(a.h2.data(), D, ffn_in.data(), D, P + L.ffn_norm, T, D, c.norm_eps);
      kernels::linear_forward(a.gate.data(), F, a.h2.data(), D, f32_view(P + L.w_gate, F, D), nullptr, T,
                              nullptr, n_threads_);
      kernels::linear_forward(a.up.data(), F, a.h2.data(), D, f32_view(P + L.w_up, F, D), nullptr, T, nullptr,
                              n_threads_);
      kernels::gated_act_forward(a.act.data(), F, a.gate.data(), a.up.data(), F, T, F,
                                 kernels::Activation::Silu);
      kernels::linear_forward(x.data(), D, a.act.data(), F, f32_view(P + L.w_down, D, F), nullptr, T, nullptr,
                              n_threads_);
      for (int64_t i = 0; i < T * D; ++i) x[static_cast<size_t>(i)] += ffn_in[static_cast<size_t>(i)];
    }
  }
  x_final_ = std::move(x);
  resize(e_, T * D);
  if (T > 0) kernels::rmsnorm_forward(e_.data(), D, x_final_.data(), D, P + O.norm, T, D, c.norm_eps);

  // Projector over stacked rows: e's first T3 * stack rows viewed as [T3, stack * D].
  const int64_t SD = c.stack * D, PH = c.proj_hidden, LH = c.llm_hidden;
  resize(hid_pre_, t3_ * PH);
  resize(hid_, t3_ * PH);
  resize(out_, t3_ * LH);
  linear(hid_pre_.data(), e_.data(), O.fc1_w, O.fc1_b, t3_, PH, SD);
  kernels::gelu_tanh_rows(hid_.data(), hid_pre_.data(), t3_ * PH);
  linear(out_.data(), hid_.data(), O.fc2_w, O.fc2_b, t3_, LH, PH);
  return out_;
}

void SpeechEncoderPass::backward(const float* d_out, float* G, const float* d_encoder_output) {
  const auto& c = model_.config();
  const auto& O = model_.offsets();
  const float* P = model_.data();
  const int64_t K = c.conv_kernel, M = c.n_mels, C = c.conv_channels, D = c.d_model, F = c.n_ff;
  const int64_t H = c.n_head, HD = c.head_dim(), T = t2_, KC = c.conv_module_kernel;
  const int64_t SD = c.stack * D, PH = c.proj_hidden, LH = c.llm_hidden;
  if (T == 0) return;
  kernels::set_blas_threads(n_threads_);
  const float scale = 1.0f / std::sqrt(static_cast<float>(HD));

  // Projector.
  std::vector<float> d_hid(static_cast<size_t>(t3_ * PH)), de(static_cast<size_t>(T * D), 0.0f);
  if (t3_ > 0 && d_out) {
    kernels::linear_backward(d_hid.data(), PH, G + O.fc2_w, G + O.fc2_b, d_out, LH, hid_.data(), PH,
                             P + O.fc2_w, LH, PH, t3_, false);
    kernels::gelu_tanh_backward_rows(d_hid.data(), d_hid.data(), hid_pre_.data(), t3_ * PH);
    kernels::linear_backward(de.data(), SD, G + O.fc1_w, G + O.fc1_b, d_hid.data(), PH, e_.data(), SD,
                             P + O.fc1_w, PH, SD, t3_, false);
  }
  if (d_encoder_output)
    for (int64_t i = 0; i < T * D; ++i) de[static_cast<size_t>(i)] += d_encoder_output[i];
  // Final norm.
  std::vector<float> dx(static_cast<size_t>(T * D), 0.0f);
  kernels::rmsnorm_backward(dx.data(), D, G + O.norm, de.data(), D, x_final_.data(), D, P + O.norm, T, D,
                            c.norm_eps);

  std::vector<float> dh(static_cast<size_t>(T * D)), dgate(static_cast<size_t>(T * F)),
      dup(static_cast<size_t>(T * F)), datt(static_cast<size_t>(T * D)), dq(static_cast<size_t>(T * D)),
      dk(static_cast<size_t>(T * D)), dv(static_cast<size_t>(T * D)),
      scratch(static_cast<size_t>(n_threads_ * T * T));
  std::vector<float> ds(KC > 0 ? static_cast<size_t>(T * D) : 0),
      dgpad(KC > 0 ? static_cast<size_t>((T + KC - 1) * D) : 0),
      dpw1(KC > 0 ? static_cast<size_t>(T * 2 * D) : 0);
  for (int64_t il = c.n_layer - 1; il >= 0; --il) {
    const auto& L = O.layers[static_cast<size_t>(il)];
    const LayerActs& a = layers_[static_cast<size_t>(il)];
    // x_next = ffn_in + W_down act (ffn_in: x_conv with the convolution module, else x_mid): dx is
    // d(x_next); d(ffn_in) = dx + (ffn path).
    const std::vector<float>& ffn_in = KC > 0 ? a.x_conv : a.x_mid;
    std::vector<float> dact(static_cast<size_t>(T * F));
    kernels::linear_backward(dact.data(), F, G + L.w_down, nullptr, dx.data(), D, a.act.data(), F,
                             P + L.w_down, D, F, T, false);
    kernels::gated_act_backward(dgate.data(), dup.data(), dact.data(), F, a.gate.data(), a.up.data(), F, T, F,
                                kernels::Activation::Silu);
    kernels::linear_backward(dh.data(), D, G + L.w_gate, nullptr, dgate.data(), F, a.h2.data(), D,
                             P + L.w_gate, F, D, T, false);
    kernels::linear_backward(dh.data(), D, G + L.w_up, nullptr, dup.data(), F, a.h2.data(), D, P + L.w_up, F,
                             D, T);
    kernels::rmsnorm_backward(dx.data(), D, G + L.ffn_norm, dh.data(), D, ffn_in.data(), D, P + L.ffn_norm, T,
                              D, c.norm_eps);
    if (KC > 0) {  // dx holds d(x_conv); x_conv = x_mid + W_pw2 silu(dwconv(glu(W_pw1 rms(x_mid))))
      kernels::linear_backward(ds.data(), D, G + L.conv_pw2, nullptr, dx.data(), D, a.s.data(), D,
                               P + L.conv_pw2, D, D, T, false);
      silu_backward_rows(ds.data(), ds.data(), a.cv.data(), T * D);
      std::fill(dgpad.begin(), dgpad.end(), 0.0f);
      depthwise_conv_causal_backward(dgpad.data(), G + L.conv_dw, ds.data(), a.gpad.data(), T, D,
                                     P + L.conv_dw, KC);
      glu_backward(dpw1.data(), dgpad.data() + (KC - 1) * D, a.pw1.data(), T, D);
      kernels::linear_backward(dh.data(), D, G + L.conv_pw1, nullptr, dpw1.data(), 2 * D, a.h3.data(), D,
                               P + L.conv_pw1, 2 * D, D, T, false);
      kernels::rmsnorm_backward(dx.data(), D, G + L.conv_norm, dh.data(), D, a.x_mid.data(), D,
                                P + L.conv_norm, T, D, c.norm_eps);
    }
    // dx now holds d(x_mid); x_mid = x + W_o att.
    kernels::linear_backward(datt.data(), D, G + L.wo, nullptr, dx.data(), D, a.att.data(), D, P + L.wo, D, D,
                             T, false);
    std::fill(dq.begin(), dq.end(), 0.0f);
    std::fill(dk.begin(), dk.end(), 0.0f);
    std::fill(dv.begin(), dv.end(), 0.0f);
    // One head per thread: each writes only its own columns of dq, dk, dv and uses its own scratch.
#pragma omp parallel for num_threads(n_threads_) schedule(static)
    for (int64_t h = 0; h < H; ++h)
      kernels::attention_backward_seq(dq.data() + h * HD, D, dk.data() + h * HD, dv.data() + h * HD, D,
                                      scratch.data() + int64_t{omp_get_thread_num()} * T * T,
                                      datt.data() + h * HD, D, a.probs.data() + h * T * T,
                                      a.q.data() + h * HD, D, a.k.data() + h * HD, a.v.data() + h * HD, D, T,
                                      HD, scale, row_end_.data());
    kernels::rope_apply(dq.data(), D, cos_.data(), sin_.data(), T, H, HD, -1.0f);
    kernels::rope_apply(dk.data(), D, cos_.data(), sin_.data(), T, H, HD, -1.0f);
    kernels::linear_backward(dh.data(), D, G + L.wq, nullptr, dq.data(), D, a.h1.data(), D, P + L.wq, D, D, T,
                             false);
    kernels::linear_backward(dh.data(), D, G + L.wk, nullptr, dk.data(), D, a.h1.data(), D, P + L.wk, D, D,
                             T);
    kernels::linear_backward(dh.data(), D, G + L.wv, nullptr, dv.data(), D, a.h1.data(), D, P + L.wv, D, D,
                             T);
    kernels::rmsnorm_backward(dx.data(), D, G + L.attn_norm, dh.data(), D, a.x.data(), D, P + L.attn_norm, T,
                              D, c.norm_eps);
  }
  // Subsampling: dx is d(gelu(pre2)).
  kernels::gelu_tanh_backward_rows(dx.data(), dx.data(), pre2_.data(), T * D);
  std::vector<float> dcols2(static_cast<size_t>(T * K * C));
  kernels::linear_backward(dcols2.data(), K * C, G + O.conv2_w, G + O.conv2_b, dx.data(), D, cols2_.data(),
                           K * C, P + O.conv2_w, D, K * C, T, false);
  std::vector<float> dy1(static_cast<size_t>(t1_ * C), 0.0f);
  conv_col2im_add(dy1.data(), dcols2.data(), t1_, C, K, K - 2, T);
  kernels::gelu_tanh_backward_rows(dy1.data(), dy1.data(), pre1_.data(), t1_ * C);
  kernels::linear_backward(nullptr, 0, G + O.conv1_w, G + O.conv1_b, dy1.data(), C, cols1_.data(), K * M,
                           P + O.conv1_w, C, K * M, t1_, false);
}

}  // namespace gpstream::speech_encoder
