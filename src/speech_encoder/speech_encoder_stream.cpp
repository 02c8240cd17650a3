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

void SpeechEncoderStream::feed(const float* mel, size_t n_frames) {
  GPS_ASSERT(!finished_, "SpeechEncoderStream::feed after the end of the input (reset() first)");
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
}

void SpeechEncoderStream::end_input() {
  GPS_ASSERT(!finished_, "SpeechEncoderStream: the end of the input twice (reset() first)");
  finished_ = true;
}

int64_t SpeechEncoderStream::chunks_ready() const {
  const auto& c = model_.config();
  const int64_t frames = static_cast<int64_t>(pending_.size()) / c.d_model;
  return frames / c.chunk_frames + (finished_ && frames % c.chunk_frames != 0 ? 1 : 0);
}

size_t SpeechEncoderStream::push(const float* mel, size_t n_frames, std::vector<float>& out) {
  GPS_ASSERT(!finished_, "SpeechEncoderStream::push after finish() (reset() first)");
  feed(mel, n_frames);
  SpeechEncoderStream* self = this;
  std::vector<float>* outs = &out;
  return run_ready_chunks({&self, 1}, {&outs, 1});
}

size_t SpeechEncoderStream::finish(std::vector<float>& out) {
  GPS_ASSERT(!finished_, "SpeechEncoderStream::finish called twice (reset() first)");
  end_input();
  SpeechEncoderStream* self = this;
  std::vector<float>* outs = &out;
  return run_ready_chunks({&self, 1}, {&outs, 1});
}

size_t SpeechEncoderStream::run_ready_chunks(std::span<SpeechEncoderStream* const> streams,
                                             std::span<std::vector<float>* const> outs,
                                             int64_t max_chunks_each) {
  GPS_ASSERT(streams.size() == outs.size(), "SpeechEncoderStream::run_ready_chunks: one output per stream");
  size_t rows = 0;
  std::vector<SpeechEncoderStream*> batch;
  std::vector<std::vector<float>*> batch_outs;
  for (int64_t round = 0; round < max_chunks_each; ++round) {
    batch.clear();
    batch_outs.clear();
    for (size_t i = 0; i < streams.size(); ++i) {
      GPS_ASSERT(&streams[i]->model_ == &streams[0]->model_,
                 "SpeechEncoderStream::run_ready_chunks: the streams must share one model");
      if (streams[i]->chunks_ready() == 0) continue;
      batch.push_back(streams[i]);
      batch_outs.push_back(outs[i]);
    }
    if (batch.empty()) break;
    rows += run_chunks(batch, batch_outs);
  }
  return rows;
}

// Every stream's chunk occupies consecutive rows [row_begin[s], row_begin[s + 1]) of the stacked activations;
// the row-wise operations (norms, linear layers, activations, residual adds) run once over all rows, the
// rest per stream over its rows.
size_t SpeechEncoderStream::run_chunks(std::span<SpeechEncoderStream* const> streams,
                                       std::span<std::vector<float>* const> outs) {
  SpeechEncoderStream& b = *streams[0];  // its scratch and threads serve the whole pass
  const auto& model = b.model_;
  const auto& c = model.config();
  const auto& O = model.offsets();
  const float* P = model.data();
  const int64_t D = c.d_model, F = c.n_ff, H = c.n_head, HD = c.head_dim(), KC = c.conv_module_kernel;
  const int n_threads = b.n_threads_;
  kernels::set_blas_threads(n_threads);
  const size_t S = streams.size();
  auto& row_begin = b.row_begin_;
  row_begin.assign(S + 1, 0);
  int64_t max_visible = 0;
  for (size_t s = 0; s < S; ++s) {
    const SpeechEncoderStream& st = *streams[s];
    const int64_t n = std::min<int64_t>(c.chunk_frames, static_cast<int64_t>(st.pending_.size()) / D);
    GPS_ASSERT(n > 0, "SpeechEncoderStream::run_chunks: a stream without a ready chunk");
    row_begin[s + 1] = row_begin[s] + n;
    const int64_t first =
        first_visible_frame(chunk_of(st.pos_, c.chunk_frames), c.chunk_frames, c.left_chunks);
    max_visible = std::max(max_visible, st.pos_ + n - first);
  }
  const int64_t N = row_begin[S];
  ensure(b.x_, N * D);
  for (auto* v : {&b.h_, &b.q_, &b.k_, &b.v_, &b.att_}) ensure(*v, N * D);
  ensure(b.gate_, N * F);
  ensure(b.up_, N * F);
  ensure(b.cos_, N * HD / 2);
  ensure(b.sin_, N * HD / 2);
  ensure(b.scores_, max_visible);
  std::vector<float> positions(static_cast<size_t>(N));
  for (size_t s = 0; s < S; ++s) {
    SpeechEncoderStream& st = *streams[s];
    const int64_t r0 = row_begin[s], n = row_begin[s + 1] - r0;
    std::copy(st.pending_.begin(), st.pending_.begin() + n * D, b.x_.begin() + r0 * D);
    st.pending_.erase(st.pending_.begin(), st.pending_.begin() + n * D);
    for (int64_t i = 0; i < n; ++i) positions[static_cast<size_t>(r0 + i)] = static_cast<float>(st.pos_ + i);
  }
  kernels::rope_table(b.cos_.data(), b.sin_.data(), positions.data(), b.inv_freq_.data(), N, HD / 2);

  kernels::AttentionShape shape;
  shape.n_head = H;
  shape.n_head_kv = H;
  shape.head_dim = HD;
  shape.kv_stride = D;
  shape.scale = 1.0f / std::sqrt(static_cast<float>(HD));
  float* x = b.x_.data();
  float* h = b.h_.data();
  float* att = b.att_.data();
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const auto& L = O.layers[static_cast<size_t>(il)];
    kernels::rmsnorm_forward(h, D, x, D, P + L.attn_norm, N, D, c.norm_eps);
    kernels::linear_forward(b.q_.data(), D, h, D, f32_view(P + L.wq, D, D), nullptr, N, nullptr, n_threads);
    kernels::linear_forward(b.k_.data(), D, h, D, f32_view(P + L.wk, D, D), nullptr, N, nullptr, n_threads);
    kernels::linear_forward(b.v_.data(), D, h, D, f32_view(P + L.wv, D, D), nullptr, N, nullptr, n_threads);
    kernels::rope_apply(b.q_.data(), D, b.cos_.data(), b.sin_.data(), N, H, HD);
    kernels::rope_apply(b.k_.data(), D, b.cos_.data(), b.sin_.data(), N, H, HD);
    for (size_t s = 0; s < S; ++s) {  // each stream's chunk sees [first, end) of its own cache
      SpeechEncoderStream& st = *streams[s];
      const int64_t r0 = row_begin[s], n = row_begin[s + 1] - r0;
      const int64_t first =
          first_visible_frame(chunk_of(st.pos_, c.chunk_frames), c.chunk_frames, c.left_chunks);
      auto& kc = st.k_cache_[static_cast<size_t>(il)];
      auto& vc = st.v_cache_[static_cast<size_t>(il)];
      kc.insert(kc.end(), b.k_.begin() + r0 * D, b.k_.begin() + (r0 + n) * D);
      vc.insert(vc.end(), b.v_.begin() + r0 * D, b.v_.begin() + (r0 + n) * D);
      kernels::KvRegion src, none;
      src.k = kc.data() + (first - st.cache_begin_) * D;
      src.v = vc.data() + (first - st.cache_begin_) * D;
      src.n_visible = st.pos_ + n - first;
      for (int64_t i = r0; i < r0 + n; ++i)
        kernels::attention_forward_token(att + i * D, b.q_.data() + i * D, src, none, shape, 0, H,
                                         b.scores_.data());
    }
    // x += W_o att (into h, then added).
    kernels::linear_forward(h, D, att, D, f32_view(P + L.wo, D, D), nullptr, N, nullptr, n_threads);
    for (int64_t i = 0; i < N * D; ++i) x[i] += h[i];
    if (KC > 0) {  // x += W_pw2 silu(dwconv(glu(W_pw1 rms(x)))), the dwconv over [history, this chunk]
      kernels::rmsnorm_forward(h, D, x, D, P + L.conv_norm, N, D, c.norm_eps);
      ensure(b.pw1_, N * 2 * D);
      kernels::linear_forward(b.pw1_.data(), 2 * D, h, D, f32_view(P + L.conv_pw1, 2 * D, D), nullptr, N,
                              nullptr, n_threads);
      for (size_t s = 0; s < S; ++s) {
        auto& hist = streams[s]->conv_hist_[static_cast<size_t>(il)];
        const int64_t r0 = row_begin[s], n = row_begin[s + 1] - r0;
        hist.resize(static_cast<size_t>((KC - 1 + n) * D));
        glu_forward(hist.data() + (KC - 1) * D, b.pw1_.data() + r0 * 2 * D, n, D);
        depthwise_conv_causal(att + r0 * D, hist.data(), n, D, P + L.conv_dw, KC);
        hist.erase(hist.begin(), hist.begin() + n * D);  // the last KC - 1 rows stay for the next chunk
      }
      silu_rows(att, att, N * D);
      kernels::linear_forward(h, D, att, D, f32_view(P + L.conv_pw2, D, D), nullptr, N, nullptr, n_threads);
      for (int64_t i = 0; i < N * D; ++i) x[i] += h[i];
    }
    kernels::rmsnorm_forward(h, D, x, D, P + L.ffn_norm, N, D, c.norm_eps);
    kernels::linear_forward(b.gate_.data(), F, h, D, f32_view(P + L.w_gate, F, D), nullptr, N, nullptr,
                            n_threads);
    kernels::linear_forward(b.up_.data(), F, h, D, f32_view(P + L.w_up, F, D), nullptr, N, nullptr,
                            n_threads);
    kernels::gated_act_forward(b.gate_.data(), F, b.gate_.data(), b.up_.data(), F, N, F,
                               kernels::Activation::Silu);
    kernels::linear_forward(h, D, b.gate_.data(), F, f32_view(P + L.w_down, D, F), nullptr, N, nullptr,
                            n_threads);
    for (int64_t i = 0; i < N * D; ++i) x[i] += h[i];
  }
  for (size_t s = 0; s < S; ++s) {
    SpeechEncoderStream& st = *streams[s];
    const int64_t chunk = chunk_of(st.pos_, c.chunk_frames);
    st.pos_ += row_begin[s + 1] - row_begin[s];
    // Drop cached rows that no later chunk sees.
    const int64_t keep_from = first_visible_frame(chunk + 1, c.chunk_frames, c.left_chunks);
    if (keep_from > st.cache_begin_) {
      for (int64_t il = 0; il < c.n_layer; ++il) {
        auto& kc = st.k_cache_[static_cast<size_t>(il)];
        auto& vc = st.v_cache_[static_cast<size_t>(il)];
        kc.erase(kc.begin(), kc.begin() + (keep_from - st.cache_begin_) * D);
        vc.erase(vc.begin(), vc.begin() + (keep_from - st.cache_begin_) * D);
      }
      st.cache_begin_ = keep_from;
    }
  }

  // Final norm, stacking (stack consecutive rows of one stream's chunk make a projector input; a partial
  // last chunk's trailing partial stack is dropped), projector.
  kernels::rmsnorm_forward(h, D, x, D, P + O.norm, N, D, c.norm_eps);
  const int64_t SD = c.stack * D, PH = c.proj_hidden, LH = c.llm_hidden;
  int64_t R = 0;
  for (size_t s = 0; s < S; ++s) R += (row_begin[s + 1] - row_begin[s]) / c.stack;
  if (R == 0) return 0;
  ensure(b.proj_in_, R * SD);
  int64_t r = 0;
  for (size_t s = 0; s < S; ++s) {
    const int64_t rows = (row_begin[s + 1] - row_begin[s]) / c.stack;
    std::copy(h + row_begin[s] * D, h + row_begin[s] * D + rows * SD, b.proj_in_.begin() + r * SD);
    r += rows;
  }
  ensure(b.hid_, R * PH);
  kernels::linear_forward(b.hid_.data(), PH, b.proj_in_.data(), SD, f32_view(P + O.fc1_w, PH, SD),
                          P + O.fc1_b, R, nullptr, n_threads);
  kernels::gelu_tanh_rows(b.hid_.data(), b.hid_.data(), R * PH);
  ensure(b.proj_out_, R * LH);
  kernels::linear_forward(b.proj_out_.data(), LH, b.hid_.data(), PH, f32_view(P + O.fc2_w, LH, PH),
                          P + O.fc2_b, R, nullptr, n_threads);
  r = 0;
  for (size_t s = 0; s < S; ++s) {
    const int64_t rows = (row_begin[s + 1] - row_begin[s]) / c.stack;
    outs[s]->insert(outs[s]->end(), b.proj_out_.begin() + r * LH, b.proj_out_.begin() + (r + rows) * LH);
    streams[s]->rows_emitted_ += static_cast<size_t>(rows);
    r += rows;
  }
  return static_cast<size_t>(R);
}

}  // namespace gpstream::speech_encoder
