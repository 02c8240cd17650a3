// SpeechEncoderStream: incremental causal convolutions, chunked Transformer with a KV cache, projector.
#include "speech_encoder/speech_encoder_stream.h"

#include <algorithm>
#include <cmath>

#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/linear.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "speech_encoder/conv_module_ops.h"
#include "speech_encoder/speech_encoder_ops.h"

namespace gpstream::speech_encoder {
namespace {

void ensure(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

}  // namespace

SpeechEncoderStream::SpeechEncoderStream(const SpeechEncoderModel& model, int n_threads)
    : model_(model), n_threads_(std::max(1, n_threads)) {
  inv_freq_ = rope_inv_freq(model_.config().head_dim(), model_.config().rope_theta);
  reset();
}

void SpeechEncoderStream::reset() {
  const auto& c = model_.config();
  // The K - 2 rows before the signal are zeros (the causal left padding of both convolutions).
  hist1_.assign(static_cast<size_t>((c.conv_kernel - 2) * c.n_mels), 0.0f);
  hist2_.assign(static_cast<size_t>((c.conv_kernel - 2) * c.conv_channels), 0.0f);
  pending_.clear();
  k_cache_.assign(static_cast<size_t>(c.n_layer), {});
  v_cache_.assign(static_cast<size_t>(c.n_layer), {});
  const int64_t kc = c.conv_module_kernel;
  conv_hist_.assign(static_cast<size_t>(kc > 0 ? c.n_layer : 0),
                    std::vector<float>(static_cast<size_t>(std::max<int64_t>(kc - 1, 0) * c.d_model), 0.0f));
  cache_begin_ = 0;
  pos_ = 0;
  frames_pushed_ = 0;
  rows_emitted_ = 0;
  finished_ = false;
}

size_t SpeechEncoderStream::cache_rows() const {
  if (k_cache_.empty()) return 0;
  return k_cache_[0].size() / static_cast<size_t>(model_.config().d_model);
}

void SpeechEncoderStream::conv_step(std::vector<float>& hist, int64_t width, size_t w, size_t b,
                                    int64_t out_width, std::vector<float>& out_rows) {
  const int64_t K = model_.config().conv_kernel;
  const int64_t rows = static_cast<int64_t>(hist.size()) / width;
  if (rows < K) return;
  const int64_t n_out = (rows - K) / kConvStride + 1;
  ensure(cols_, n_out * K * width);
  ensure(conv_pre_, n_out * out_width);
  conv_im2col(cols_.data(), hist.data(), rows, width, K, 0, n_out);
  const float* P = model_.data();
  kernels::linear_forward(conv_pre_.data(), out_width, cols_.data(), K * width,
                          f32_view(P + w, out_width, K * width), P + b, n_out, nullptr, n_threads_);
  const size_t old = out_rows.size();
  out_rows.resize(old + static_cast<size_t>(n_out * out_width));
  kernels::gelu_tanh_rows(out_rows.data() + old, conv_pre_.data(), n_out * out_width);
  hist.erase(hist.begin(), hist.begin() + n_out * kConvStride * width);
}

size_t SpeechEncoderStream::push(const float* mel, size_t n_frames, std::vector<float>& out) {
  GPS_ASSERT(!finished_, "SpeechEncoderStream::push after finish() (reset() first)");
  const auto& c = model_.config();
  const auto& O = model_.offsets();
  kernels::set_blas_threads(n_threads_);  // else OpenBLAS uses every core for the small GEMMs
  frames_pushed_ += n_frames;
  const size_t old = hist1_.size(), n_values = n_frames * static_cast<size_t>(c.n_mels);
  hist1_.resize(old + n_values);
  for (size_t i = 0; i < n_values; ++i) hist1_[old + i] = (mel[i] + c.mel_shift) * c.mel_scale;
  conv_out_.clear();
  conv_step(hist1_, c.n_mels, O.conv1_w, O.conv1_b, c.conv_channels, conv_out_);
  hist2_.insert(hist2_.end(), conv_out_.begin(), conv_out_.end());
  conv_step(hist2_, c.conv_channels, O.conv2_w, O.conv2_b, c.d_model, pending_);
  size_t rows = 0;
  // Run every complete chunk; pending_ always starts at a chunk boundary.
  while (static_cast<int64_t>(pending_.size()) >= c.chunk_frames * c.d_model) rows += run_chunk(out);
  return rows;
}

size_t SpeechEncoderStream::finish(std::vector<float>& out) {
  GPS_ASSERT(!finished_, "SpeechEncoderStream::finish called twice (reset() first)");
  size_t rows = pending_.empty() ? 0 : run_chunk(out);
  finished_ = true;
  return rows;
}

// Runs the first min(chunk_frames, pending) encoder frames of pending_ (one chunk) through the Transformer
// and the projector.
size_t SpeechEncoderStream::run_chunk(std::vector<float>& out) {
  const auto& c = model_.config();
  const auto& O = model_.offsets();
  const float* P = model_.data();
  const int64_t D = c.d_model, F = c.n_ff, H = c.n_head, HD = c.head_dim(), KC = c.conv_module_kernel;
  const int64_t n = std::min<int64_t>(c.chunk_frames, static_cast<int64_t>(pending_.size()) / D);
  const int64_t chunk = chunk_of(pos_, c.chunk_frames);
  const int64_t first = first_visible_frame(chunk, c.chunk_frames, c.left_chunks);
  const int64_t end = pos_ + n;  // every frame of this chunk sees [first, end)

  ensure(x_, n * D);
  std::copy(pending_.begin(), pending_.begin() + n * D, x_.begin());
  pending_.erase(pending_.begin(), pending_.begin() + n * D);
  for (auto* v : {&h_, &q_, &k_, &v_, &att_}) ensure(*v, n * D);
  ensure(gate_, n * F);
  ensure(up_, n * F);
  ensure(cos_, n * HD / 2);
  ensure(sin_, n * HD / 2);
  std::vector<float> positions(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = static_cast<float>(pos_ + i);
  kernels::rope_table(cos_.data(), sin_.data(), positions.data(), inv_freq_.data(), n, HD / 2);
  ensure(scores_, end - first);

  kernels::AttentionShape shape;
  shape.n_head = H;
  shape.n_head_kv = H;
  shape.head_dim = HD;
  shape.kv_stride = D;
  shape.scale = 1.0f / std::sqrt(static_cast<float>(HD));
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const auto& L = O.layers[static_cast<size_t>(il)];
    kernels::rmsnorm_forward(h_.data(), D, x_.data(), D, P + L.attn_norm, n, D, c.norm_eps);
    kernels::linear_forward(q_.data(), D, h_.data(), D, f32_view(P + L.wq, D, D), nullptr, n, nullptr,
                            n_threads_);
    kernels::linear_forward(k_.data(), D, h_.data(), D, f32_view(P + L.wk, D, D), nullptr, n, nullptr,
                            n_threads_);
    kernels::linear_forward(v_.data(), D, h_.data(), D, f32_view(P + L.wv, D, D), nullptr, n, nullptr,
                            n_threads_);
    kernels::rope_apply(q_.data(), D, cos_.data(), sin_.data(), n, H, HD);
    kernels::rope_apply(k_.data(), D, cos_.data(), sin_.data(), n, H, HD);
    auto& kc = k_cache_[static_cast<size_t>(il)];
    auto& vc = v_cache_[static_cast<size_t>(il)];
    kc.insert(kc.end(), k_.begin(), k_.begin() + n * D);
    vc.insert(vc.end(), v_.begin(), v_.begin() + n * D);
    kernels::KvRegion src, none;
    src.k = kc.data() + (first - cache_begin_) * D;
    src.v = vc.data() + (first - cache_begin_) * D;
    src.n_visible = end - first;
    for (int64_t i = 0; i < n; ++i)
      kernels::attention_forward_token(att_.data() + i * D, q_.data() + i * D, src, none, shape, 0, H,
                                       scores_.data());
    // x += W_o att (into h_, then added).
    kernels::linear_forward(h_.data(), D, att_.data(), D, f32_view(P + L.wo, D, D), nullptr, n, nullptr,
                            n_threads_);
    for (int64_t i = 0; i < n * D; ++i) x_[static_cast<size_t>(i)] += h_[static_cast<size_t>(i)];
    if (KC > 0) {  // x += W_pw2 silu(dwconv(glu(W_pw1 rms(x)))), the dwconv over [history, this chunk]
      auto& hist = conv_hist_[static_cast<size_t>(il)];
      kernels::rmsnorm_forward(h_.data(), D, x_.data(), D, P + L.conv_norm, n, D, c.norm_eps);
      ensure(pw1_, n * 2 * D);
      kernels::linear_forward(pw1_.data(), 2 * D, h_.data(), D, f32_view(P + L.conv_pw1, 2 * D, D), nullptr,
                              n, nullptr, n_threads_);
      hist.resize(static_cast<size_t>((KC - 1 + n) * D));
      glu_forward(hist.data() + (KC - 1) * D, pw1_.data(), n, D);
      depthwise_conv_causal(att_.data(), hist.data(), n, D, P + L.conv_dw, KC);
      silu_rows(att_.data(), att_.data(), n * D);
      kernels::linear_forward(h_.data(), D, att_.data(), D, f32_view(P + L.conv_pw2, D, D), nullptr, n,
                              nullptr, n_threads_);
      for (int64_t i = 0; i < n * D; ++i) x_[static_cast<size_t>(i)] += h_[static_cast<size_t>(i)];
      hist.erase(hist.begin(), hist.begin() + n * D);  // the last KC - 1 rows stay for the next chunk
    }
    kernels::rmsnorm_forward(h_.data(), D, x_.data(), D, P + L.ffn_norm, n, D, c.norm_eps);
    kernels::linear_forward(gate_.data(), F, h_.data(), D, f32_view(P + L.w_gate, F, D), nullptr, n, nullptr,
                            n_threads_);
    kernels::linear_forward(up_.data(), F, h_.data(), D, f32_view(P + L.w_up, F, D), nullptr, n, nullptr,
                            n_threads_);
    kernels::gated_act_forward(gate_.data(), F, gate_.data(), up_.data(), F, n, F, kernels::Activation::Silu);
    kernels::linear_forward(h_.data(), D, gate_.data(), F, f32_view(P + L.w_down, D, F), nullptr, n, nullptr,
                            n_threads_);
    for (int64_t i = 0; i < n * D; ++i) x_[static_cast<size_t>(i)] += h_[static_cast<size_t>(i)];
  }
  pos_ = end;
  // Drop cached rows that no later chunk sees.
  const int64_t keep_from = first_visible_frame(chunk + 1, c.chunk_frames, c.left_chunks);
  if (keep_from > cache_begin_) {
    for (int64_t il = 0; il < c.n_layer; ++il) {
      auto& kc = k_cache_[static_cast<size_t>(il)];
      auto& vc = v_cache_[static_cast<size_t>(il)];
      kc.erase(kc.begin(), kc.begin() + (keep_from - cache_begin_) * D);
      vc.erase(vc.begin(), vc.begin() + (keep_from - cache_begin_) * D);
    }
    cache_begin_ = keep_from;
  }

  // Final norm, stacking (rows of x_ are consecutive, so n / stack stacked rows are a reshape), projector.
  kernels::rmsnorm_forward(h_.data(), D, x_.data(), D, P + O.norm, n, D, c.norm_eps);
  const int64_t rows = n / c.stack, SD = c.stack * D, PH = c.proj_hidden, LH = c.llm_hidden;
  if (rows == 0) return 0;
  ensure(hid_, rows * PH);
  kernels::linear_forward(hid_.data(), PH, h_.data(), SD, f32_view(P + O.fc1_w, PH, SD), P + O.fc1_b, rows,
                          nullptr, n_threads_);
  kernels::gelu_tanh_rows(hid_.data(), hid_.data(), rows * PH);
  const size_t old = out.size();
  out.resize(old + static_cast<size_t>(rows * LH));
  kernels::linear_forward(out.data() + old, LH, hid_.data(), PH, f32_view(P + O.fc2_w, LH, PH), P + O.fc2_b,
                          rows, nullptr, n_threads_);
  rows_emitted_ += static_cast<size_t>(rows);
  return static_cast<size_t>(rows);
}

}  // namespace gpstream::speech_encoder
