// Training forward and backward.
#include "train/train_model.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/activation.h"
#include "kernels/activation_backward.h"
#include "kernels/attention_backward.h"
#include "kernels/cross_entropy.h"
#include "kernels/linear.h"
#include "kernels/linear_backward.h"
#include "kernels/norm.h"
#include "kernels/norm_backward.h"
#include "kernels/rope.h"
#include "util/memory_budget.h"
#include "util/splitmix64.h"

namespace gpstream::train {
namespace {

// Splits [0, n) into nt contiguous chunks; chunk i of thread tid.
inline void chunk(int64_t n, int nt, int tid, int64_t& b, int64_t& e) {
  const int64_t per = (n + nt - 1) / nt;
  b = std::min(n, per * tid);
  e = std::min(n, b + per);
}

using kernels::f32_view;

}  // namespace

int64_t TrainSequence::n_labels() const {
  int64_t n = 0;
  for (int32_t l : labels) n += l >= 0;
  return n;
}

Status TrainSequence::validate(int32_t n_vocab, int32_t n_embd) const {
  const size_t n = ids.size();
  if (positions.size() != n || groups.size() != n || n_src.size() != n || n_tgt.size() != n ||
      labels.size() != n)
    return invalid_argument(
        "training sequence: ids, positions, groups, n_src, n_tgt and labels differ in length");
  if (!input_row.empty() && input_row.size() != n)
    return invalid_argument("training sequence: input_row must be empty or have one entry per row");
  if (n_embd <= 0 || inputs.size() % static_cast<size_t>(n_embd) != 0)
    return invalid_argument("training sequence: the input rows buffer holds " +
                            std::to_string(inputs.size()) + " floats, not whole rows of " +
                            std::to_string(n_embd));
  const auto n_inputs = static_cast<int64_t>(inputs.size() / static_cast<size_t>(n_embd));
  for (float v : inputs)
    if (!std::isfinite(v)) return invalid_argument("training sequence: non-finite input row value");
  int32_t counts[2] = {0, 0};
  for (size_t i = 0; i < n; ++i) {
    const bool from_input = !input_row.empty() && input_row[i] >= 0;
    if (from_input && input_row[i] >= n_inputs)
      return out_of_range("training sequence: row " + std::to_string(i) + " takes input row " +
                          std::to_string(input_row[i]) + " of " + std::to_string(n_inputs));
    if (!from_input && (ids[i] < 0 || ids[i] >= n_vocab))
      return out_of_range("training sequence: token id " + std::to_string(ids[i]) + " at row " +
                          std::to_string(i) + " outside the vocabulary (size " + std::to_string(n_vocab) +
                          ")");
    if (labels[i] >= n_vocab)
      return out_of_range("training sequence: label " + std::to_string(labels[i]) + " at row " +
                          std::to_string(i) + " outside the vocabulary");
    if (groups[i] > 1) return invalid_argument("training sequence: group must be 0 (source) or 1 (target)");
    if (!std::isfinite(positions[i])) return invalid_argument("training sequence: non-finite position");
    ++counts[groups[i]];
  }
  for (size_t i = 0; i < n; ++i)
    if (n_src[i] < 0 || n_tgt[i] < 0 || n_src[i] > counts[0] || n_tgt[i] > counts[1])
      return invalid_argument("training sequence: row " + std::to_string(i) + " sees " +
                              std::to_string(n_src[i]) + " source and " + std::to_string(n_tgt[i]) +
                              " target rows, but the sequence has " + std::to_string(counts[0]) + " and " +
                              std::to_string(counts[1]));
  return {};
}

int64_t TrainBatch::n_tokens() const {
  int64_t n = 0;
  for (const auto& s : seqs) n += static_cast<int64_t>(s.size());
  return n;
}

int64_t TrainBatch::n_labels() const {
  int64_t n = 0;
  for (const auto& s : seqs) n += s.n_labels();
  return n;
}

Result<std::unique_ptr<TrainModel>> TrainModel::create(const model::ModelConfig& config,
                                                       const io::TensorMap& init, const LoraOptions& lora,
                                                       uint64_t lora_seed, TrainShape shape, int n_threads) {
  GPS_TRY(config.validate());
  if (config.mlp_bias) return unsupported("training: mlp_bias models are not supported");
  if (shape.max_tokens <= 0 || shape.max_seq <= 0 || shape.max_seq > shape.max_tokens)
    return invalid_argument("training: bad shape (max_tokens " + std::to_string(shape.max_tokens) +
                            ", max_seq " + std::to_string(shape.max_seq) + ")");
  if (lora.rank < 0 || !(lora.dropout >= 0.0f && lora.dropout < 1.0f))
    return invalid_argument("LoRA: rank must be >= 0 and dropout in [0, 1)");
  std::unique_ptr<TrainModel> m(new TrainModel());
  m->config_ = config;
  m->lora_ = lora;
  m->shape_ = shape;
  m->n_threads_ = n_threads > 0 ? n_threads : std::max(1, omp_get_max_threads());
  // Everything this model will hold, checked against the memory budget before the big allocations: fp32
  // weights, gradients and AdamW's two moments of the trainable parameters, the activation block.
  m->lora_params_ = lora_param_set(config, lora, lora_seed, m->lora_layout_);
  const uint64_t n_base = config.n_params();
  const uint64_t n_trainable = lora.rank > 0 ? m->lora_params_.size() : n_base;
  const size_t act_floats = m->plan();
  GPS_TRY(check_memory_budget(
      saturating_product(
          {sizeof(float), saturating_sum({n_base, saturating_product({3, n_trainable}), act_floats})}),
      "training this model (weights, gradients, optimizer state and activations for " +
          std::to_string(shape.max_tokens) + " tokens per step)"));
  m->base_ = model_param_set(config, m->layout_);
  GPS_TRY(m->base_.load(init));
  m->grads_.assign(m->trainable().size(), 0.0f);
  m->rope_ = model::RopeFrequencies::from_config(config);
  m->acts_.assign(act_floats, 0.0f);
  return m;
}

size_t TrainModel::plan() {
  const model::ModelConfig& c = config_;
  const int64_t N = shape_.max_tokens, Tm = shape_.max_seq, E = c.n_embd, H = c.n_head,
                Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim, F = c.n_ff,
                V = c.n_vocab, half = c.rope_dim() / 2, r = lora_.rank;
  size_t off = 0;
  auto take = [&](int64_t n) {
    const size_t o = off;
    off += (static_cast<size_t>(n) + 15) & ~size_t{15};  // 64-byte aligned starts
    return o;
  };
  layer_acts_.assign(static_cast<size_t>(c.n_layer), LayerActs{});
  for (int il = 0; il < c.n_layer; ++il) {
    LayerActs& a = layer_acts_[static_cast<size_t>(il)];
    a.x = take(N * E);
    a.h1 = take(N * E);
    a.q = take(N * Q);
    a.k = take(N * KV);
    a.v = take(N * KV);
    a.att = take(N * Q);
    a.x_mid = take(N * E);
    a.h2 = take(N * E);
    a.gate = take(N * F);
    a.up = take(N * F);
    a.act = take(N * F);
    a.probs = take(H * N * Tm);
    a.o_raw = c.sandwich_norms ? take(N * E) : kNoParam;
    a.d_raw = c.sandwich_norms ? take(N * E) : kNoParam;
    for (int t = 0; t < kLoraTargets; ++t)
      a.xa[t] = lora_layout_[static_cast<size_t>(il)].a[t] != kNoParam ? take(N * r) : kNoParam;
  }
  GlobalActs& g = glob_;
  g.x_final = take(N * E);
  g.hf = take(N * E);
  g.logits = take(N * V);
  g.cos_t = take(N * half);
  g.sin_t = take(N * half);
  g.mask = take(N * Tm);
  g.mask_sw = c.sliding_window > 0 ? take(N * Tm) : kNoParam;
  g.cap_rows = c.final_softcap > 0 ? take(int64_t{n_threads_} * V) : kNoParam;
  g.dx = take(N * E);
  g.dh = take(N * E);
  g.dq = take(N * Q);
  g.dk = take(N * KV);
  g.dv = take(N * KV);
  g.datt = take(N * Q);
  g.dgate = take(N * F);
  g.dup = take(N * F);
  g.dact = take(N * F);
  g.att_scratch = take(int64_t{n_threads_} * Tm * Tm * (c.attn_softcap > 0 ? 2 : 1));
  g.dxa = take(N * std::max<int64_t>(r, 1));
  g.drop = take(N * std::max({E, F, Q}));
  g.dnorm = take(int64_t{n_threads_} * E);
  return off;
}

void TrainModel::dropout_apply(float* dst, const float* x, int64_t n_elems, int il, LoraTarget t) const {
  const float p = lora_.dropout, keep_scale = 1.0f / (1.0f - p);
  const uint64_t key =
      splitmix64_mix(fwd_opts_.dropout_seed ^
                     splitmix64_mix(static_cast<uint64_t>(il) * kLoraTargets + static_cast<uint64_t>(t) + 1));
  const auto threshold = static_cast<uint64_t>(static_cast<double>(p) * 16777216.0);
#pragma omp parallel for num_threads(n_threads_) schedule(static)
  for (int64_t i = 0; i < n_elems; ++i) {
    const uint64_t h = splitmix64_mix(key + static_cast<uint64_t>(i)) >> 40;  // 24 bits
    dst[i] = h < threshold ? 0.0f : x[i] * keep_scale;
  }
}

void TrainModel::lora_forward(int il, LoraTarget t, float* y, const float* x, int64_t in, int64_t out,
                              int64_t n, const ForwardOptions& o) {
  const auto ti = static_cast<size_t>(t);
  const LoraLayerLayout& L = lora_layout_[static_cast<size_t>(il)];
  if (L.a[ti] == kNoParam) return;
  const int r = lora_.rank;
  const float* A = lora_params_.values.data() + L.a[ti];
  const float* B = lora_params_.values.data() + L.b[ti];
  float* xa = acts_.data() + layer_acts_[static_cast<size_t>(il)].xa[ti];
  const float* xin = x;
  if (o.training && lora_.dropout > 0.0f) {
    float* d = acts_.data() + glob_.drop;
    dropout_apply(d, x, n * in, il, t);
    xin = d;
  }
  const int N = static_cast<int>(n), I = static_cast<int>(in), O = static_cast<int>(out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, r, I, 1.0f, xin, I, A, I, 0.0f, xa, r);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, O, r, lora_.scale(), xa, r, B, r, 1.0f, y, O);
}

void TrainModel::lora_backward(int il, LoraTarget t, float* dx, const float* dy, const float* x, int64_t in,
                               int64_t out, int64_t n) {
  const auto ti = static_cast<size_t>(t);
  const LoraLayerLayout& L = lora_layout_[static_cast<size_t>(il)];
  if (L.a[ti] == kNoParam) return;
  const int r = lora_.rank;
  const float s = lora_.scale();
  const float* A = lora_params_.values.data() + L.a[ti];
  const float* B = lora_params_.values.data() + L.b[ti];
  float* gA = grads_.data() + L.a[ti];
  float* gB = grads_.data() + L.b[ti];
  const float* xa = acts_.data() + layer_acts_[static_cast<size_t>(il)].xa[ti];
  float* dxa = acts_.data() + glob_.dxa;
  float* drop = acts_.data() + glob_.drop;
  const int N = static_cast<int>(n), I = static_cast<int>(in), O = static_cast<int>(out);
  const bool dropout = fwd_opts_.training && lora_.dropout > 0.0f;
  // dB += s · dyᵀ xa ; dxa = s · dy B
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, O, r, N, s, dy, O, xa, r, 1.0f, gB, r);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, r, O, s, dy, O, B, r, 0.0f, dxa, r);
  const float* xin = x;
  if (dropout) {
    dropout_apply(drop, x, n * in, il, t);
    xin = drop;
  }
  // dA += dxaᵀ drop(x)
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r, I, N, 1.0f, dxa, r, xin, I, 1.0f, gA, I);
  if (!dropout) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, I, r, 1.0f, dxa, r, A, I, 1.0f, dx, I);
  } else {
    // dx += mask ⊙ (dxa A) / (1 − p): the dropout is linear with the same mask.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, I, r, 1.0f, dxa, r, A, I, 0.0f, drop, I);
    dropout_apply(drop, drop, n * in, il, t);
    for (int64_t i = 0; i < n * in; ++i) dx[i] += drop[i];
  }
}

Result<double> TrainModel::forward(const TrainBatch& batch, const ForwardOptions& o) {
  const model::ModelConfig& c = config_;
  const int64_t N = batch.n_tokens();
  if (N <= 0) return invalid_argument("training batch is empty");
  if (N > shape_.max_tokens)
    return invalid_argument("training batch has " + std::to_string(N) + " tokens, more than the planned " +
                            std::to_string(shape_.max_tokens));
  for (size_t s = 0; s < batch.seqs.size(); ++s) {
    const TrainSequence& sq = batch.seqs[s];
    if (static_cast<int64_t>(sq.size()) > shape_.max_seq)
      return invalid_argument("training sequence " + std::to_string(s) + " has " + std::to_string(sq.size()) +
                              " tokens, more than the planned " + std::to_string(shape_.max_seq));
    auto st = sq.validate(c.n_vocab, c.n_embd);
    if (!st.ok()) return st.error().with_context("sequence " + std::to_string(s));
  }
  batch_ = &batch;
  fwd_opts_ = o;
  n_tok_ = N;
  const int nt = n_threads_;
  const int64_t E = c.n_embd, D = c.head_dim, H = c.n_head, HKV = c.n_head_kv, Q = H * D, KV = HKV * D,
                F = c.n_ff, V = c.n_vocab;
  const size_t S = batch.seqs.size();
  seq_begin_.assign(S + 1, 0);
  mask_off_.assign(S + 1, 0);
  for (size_t s = 0; s < S; ++s) {
    const auto T = static_cast<int64_t>(batch.seqs[s].size());
    seq_begin_[s + 1] = seq_begin_[s] + T;
    mask_off_[s + 1] = mask_off_[s] + T * T;
  }
  out_rows_.clear();
  out_targets_.clear();
  for (size_t s = 0; s < S; ++s)
    for (size_t i = 0; i < batch.seqs[s].size(); ++i) {
      const int32_t lab = batch.seqs[s].labels[i];
      if (o.all_logits || lab >= 0) {
        out_rows_.push_back(seq_begin_[s] + static_cast<int64_t>(i));
        out_targets_.push_back(lab);
      }
    }
  n_out_ = static_cast<int64_t>(out_rows_.size());

  float* A = acts_.data();
  const float* P = base_.values.data();
  // Embeddings, RoPE tables, masks.
  {
    float* x = A + layer_acts_[0].x;
    std::vector<float> pos(static_cast<size_t>(N));
    row_end_.resize(static_cast<size_t>(N));
    row_end_sw_.resize(c.sliding_window > 0 ? static_cast<size_t>(N) : 0);
    for (size_t s = 0; s < S; ++s)
      for (size_t i = 0; i < batch.seqs[s].size(); ++i) {
        const int64_t t = seq_begin_[s] + static_cast<int64_t>(i);
        const TrainSequence& sq = batch.seqs[s];
        const float* src =
            !sq.input_row.empty() && sq.input_row[i] >= 0
                ? sq.inputs.data() + static_cast<size_t>(sq.input_row[i]) * static_cast<size_t>(E)
                : P + layout_.tok_embd + static_cast<size_t>(sq.ids[i]) * E;
        std::memcpy(x + t * E, src, static_cast<size_t>(E) * sizeof(float));
        if (c.embed_scale != 1.0f)
          for (int64_t j = 0; j < E; ++j) x[t * E + j] *= c.embed_scale;
        pos[static_cast<size_t>(t)] = batch.seqs[s].positions[i];
      }
    rope_.table(A + glob_.cos_t, A + glob_.sin_t, pos.data(), N);
    for (size_t s = 0; s < S; ++s) {
      const TrainSequence& sq = batch.seqs[s];
      kernels::attention_mask_build(A + glob_.mask + mask_off_[s], sq.groups.data(), sq.n_src.data(),
                                    sq.n_tgt.data(), static_cast<int64_t>(sq.size()));
      kernels::attention_row_end(row_end_.data() + seq_begin_[s], A + glob_.mask + mask_off_[s],
                                 static_cast<int64_t>(sq.size()));
      if (c.sliding_window > 0) {
        kernels::attention_mask_build(A + glob_.mask_sw + mask_off_[s], sq.groups.data(), sq.n_src.data(),
                                      sq.n_tgt.data(), static_cast<int64_t>(sq.size()), c.sliding_window);
        kernels::attention_row_end(row_end_sw_.data() + seq_begin_[s], A + glob_.mask_sw + mask_off_[s],
                                   static_cast<int64_t>(sq.size()));
      }
    }
  }
  auto rmsnorm_rows = [&](float* out, const float* x, const float* w, int64_t rows) {
#pragma omp parallel num_threads(nt)
    {
      int64_t b, e;
      chunk(rows, nt, omp_get_thread_num(), b, e);
      if (e > b)
        kernels::rmsnorm_forward(out + b * E, E, x + b * E, E, w, e - b, E, c.norm_eps, c.norm_weight_offset);
    }
  };
  auto linear = [&](float* y, const float* x, size_t w, size_t b, int64_t out, int64_t in) {
    kernels::linear_forward(y, out, x, in, f32_view(P + w, out, in), b == kNoParam ? nullptr : P + b, N,
                            nullptr, nt);
  };
  const float scale = c.attention_scale();
  const int64_t group = H / HKV;
  const kernels::Activation act_fn =
      c.hidden_act == model::HiddenAct::GeluTanh ? kernels::Activation::GeluTanh : kernels::Activation::Silu;
  for (int il = 0; il < c.n_layer; ++il) {
    const LayerLayout& L = layout_.layers[static_cast<size_t>(il)];
    const LayerActs& la = layer_acts_[static_cast<size_t>(il)];
    float *x = A + la.x, *h1 = A + la.h1, *q = A + la.q, *k = A + la.k, *v = A + la.v, *att = A + la.att,
          *x_mid = A + la.x_mid, *h2 = A + la.h2, *gate = A + la.gate, *up = A + la.up, *act = A + la.act,
          *probs = A + la.probs;
    float* x_next = il + 1 < c.n_layer ? A + layer_acts_[static_cast<size_t>(il) + 1].x : A + glob_.x_final;
    rmsnorm_rows(h1, x, P + L.attn_norm, N);
    linear(q, h1, L.wq, L.bq, Q, E);
    lora_forward(il, LoraTarget::Q, q, h1, E, Q, N, o);
    linear(k, h1, L.wk, L.bk, KV, E);
    lora_forward(il, LoraTarget::K, k, h1, E, KV, N, o);
    linear(v, h1, L.wv, L.bv, KV, E);
    lora_forward(il, LoraTarget::V, v, h1, E, KV, N, o);
    rope_.apply(q, Q, A + glob_.cos_t, A + glob_.sin_t, N, H);
    rope_.apply(k, KV, A + glob_.cos_t, A + glob_.sin_t, N, HKV);
    const bool slides = c.layer_slides(il);
    const float* mask = A + (slides ? glob_.mask_sw : glob_.mask);
    const int32_t* row_end = slides ? row_end_sw_.data() : row_end_.data();
    const auto items = static_cast<int64_t>(S) * H;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      const auto s = static_cast<size_t>(item / H);
      const int64_t h = item % H, kvh = h / group, T = seq_begin_[s + 1] - seq_begin_[s], t0 = seq_begin_[s];
      if (T == 0) continue;
      kernels::attention_forward_seq(att + t0 * Q + h * D, Q, probs + H * mask_off_[s] + h * T * T,
                                     q + t0 * Q + h * D, Q, k + t0 * KV + kvh * D, v + t0 * KV + kvh * D, KV,
                                     mask + mask_off_[s], T, D, scale, row_end + t0, c.attn_softcap);
    }
    float* o_out = c.sandwich_norms ? A + la.o_raw : x_mid;
    linear(o_out, att, L.wo, L.bo, E, Q);
    lora_forward(il, LoraTarget::O, o_out, att, Q, E, N, o);
    if (c.sandwich_norms) rmsnorm_rows(x_mid, o_out, P + L.attn_post_norm, N);
    for (int64_t i = 0; i < N * E; ++i) x_mid[i] += x[i];
    rmsnorm_rows(h2, x_mid, P + L.ffn_norm, N);
    linear(gate, h2, L.w_gate, kNoParam, F, E);
    lora_forward(il, LoraTarget::Gate, gate, h2, E, F, N, o);
    linear(up, h2, L.w_up, kNoParam, F, E);
    lora_forward(il, LoraTarget::Up, up, h2, E, F, N, o);
#pragma omp parallel num_threads(nt)
    {
      int64_t b, e;
      chunk(N, nt, omp_get_thread_num(), b, e);
      if (e > b) kernels::gated_act_forward(act + b * F, F, gate + b * F, up + b * F, F, e - b, F, act_fn);
    }
    float* d_out = c.sandwich_norms ? A + la.d_raw : x_next;
    linear(d_out, act, L.w_down, kNoParam, E, F);
    lora_forward(il, LoraTarget::Down, d_out, act, F, E, N, o);
    if (c.sandwich_norms) rmsnorm_rows(x_next, d_out, P + L.ffn_post_norm, N);
    for (int64_t i = 0; i < N * E; ++i) x_next[i] += x_mid[i];
  }
  // Final norm and LM head over the logit rows only.
  float* hf = A + glob_.hf;
  float* logits = A + glob_.logits;
  const float* xf = A + glob_.x_final;
  for (int64_t r = 0; r < n_out_; ++r)
    kernels::rmsnorm_forward(hf + r * E, E, xf + out_rows_[static_cast<size_t>(r)] * E, E,
                             P + layout_.output_norm, 1, E, c.norm_eps, c.norm_weight_offset);
  if (n_out_ == 0) return 0.0;
  kernels::linear_forward(logits, V, hf, E, f32_view(P + layout_.output, V, E), nullptr, n_out_, nullptr, nt);
  if (c.final_softcap > 0) {
    const float cap = c.final_softcap;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < n_out_ * V; ++i) logits[i] = cap * std::tanh(logits[i] / cap);
  }
  std::vector<float> losses(static_cast<size_t>(n_out_), 0.0f);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < n_out_; ++r)
    if (out_targets_[static_cast<size_t>(r)] >= 0)
      kernels::cross_entropy_forward(&losses[static_cast<size_t>(r)], logits + r * V,
                                     &out_targets_[static_cast<size_t>(r)], 1, V);
  double sum = 0.0;
  for (float l : losses) sum += l;
  return sum;
}

std::vector<float> TrainModel::attention_probabilities(size_t seq, int layer) const {
  GPS_ASSERT(batch_ != nullptr && seq + 1 < seq_begin_.size() && layer >= 0 && layer < config_.n_layer,
             "attention_probabilities: no such sequence or layer in the last forward");
  const int64_t H = config_.n_head, t0 = seq_begin_[seq], T = seq_begin_[seq + 1] - t0;
  const float* probs = acts_.data() + layer_acts_[static_cast<size_t>(layer)].probs + H * mask_off_[seq];
  // Past a row's last visible key the kernel leaves whatever was there: only [0, row_end) is read.
  const int32_t* row_end = (config_.layer_slides(layer) ? row_end_sw_ : row_end_).data() + t0;
  std::vector<float> out(static_cast<size_t>(H * T * T), 0.0f);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < T; ++i)
      std::copy_n(probs + (h * T + i) * T, row_end[i], out.begin() + (h * T + i) * T);
  return out;
}

void TrainModel::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
}

void TrainModel::rmsnorm_bwd_parallel(float* dx, float* dw, const float* dout, const float* x, const float* w,
                                      int64_t n) {
  const int64_t E = config_.n_embd;
  const int nt = n_threads_;
  float* partial = acts_.data() + glob_.dnorm;
  if (dw) std::fill(partial, partial + int64_t{nt} * E, 0.0f);
#pragma omp parallel num_threads(nt)
  {
    const int tid = omp_get_thread_num();
    int64_t b, e;
    chunk(n, nt, tid, b, e);
    if (e > b)
      kernels::rmsnorm_backward(dx + b * E, E, dw ? partial + tid * E : nullptr, dout + b * E, E, x + b * E,
                                E, w, e - b, E, config_.norm_eps, config_.norm_weight_offset);
  }
  if (dw)
    for (int t = 0; t < nt; ++t)
      for (int64_t i = 0; i < E; ++i) dw[i] += partial[t * E + i];
}

void TrainModel::backward(float loss_scale) {
  GPS_ASSERT(batch_ != nullptr, "backward() without forward()");
  const model::ModelConfig& c = config_;
  const TrainBatch& batch = *batch_;
  const int nt = n_threads_;
  const int64_t N = n_tok_, E = c.n_embd, D = c.head_dim, H = c.n_head, HKV = c.n_head_kv, Q = H * D,
                KV = HKV * D, F = c.n_ff, V = c.n_vocab, group = H / HKV;
  const size_t S = batch.seqs.size();
  float* A = acts_.data();
  const float* P = base_.values.data();
  const bool train_base = !lora_enabled();
  float* G = grads_.data();
  auto gb = [&](size_t off) -> float* { return train_base && off != kNoParam ? G + off : nullptr; };
  float *dx = A + glob_.dx, *dh = A + glob_.dh, *dq = A + glob_.dq, *dk = A + glob_.dk, *dv = A + glob_.dv,
        *datt = A + glob_.datt, *dgate = A + glob_.dgate, *dup = A + glob_.dup, *dact = A + glob_.dact;
  auto zero = [](float* p, int64_t n) { std::memset(p, 0, static_cast<size_t>(n) * sizeof(float)); };

  // Cross-entropy → dlogits in place; LM head; final norm.
  float* logits = A + glob_.logits;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t r = 0; r < n_out_; ++r) {
    const int32_t y = out_targets_[static_cast<size_t>(r)];
    float* z = logits + r * V;
    if (y < 0) {
      std::fill(z, z + V, 0.0f);
      continue;
    }
    if (c.final_softcap > 0) {
      // z = cap·tanh(raw/cap): dz/draw = 1 − (z/cap)², from a copy of the capped row.
      float* capped = A + glob_.cap_rows + int64_t{omp_get_thread_num()} * V;
      std::copy_n(z, V, capped);
      kernels::cross_entropy_backward(z, z, &y, 1, V, loss_scale);
      const float inv = 1.0f / c.final_softcap;
      for (int64_t j = 0; j < V; ++j) z[j] *= 1.0f - (capped[j] * inv) * (capped[j] * inv);
    } else {
      kernels::cross_entropy_backward(z, z, &y, 1, V, loss_scale);
    }
  }
  float* dhf = A + glob_.drop;  // [n_out, E] compact
  zero(dhf, n_out_ * E);
  kernels::linear_backward(dhf, E, gb(layout_.output), nullptr, logits, V, A + glob_.hf, E,
                           P + layout_.output, V, E, n_out_);
  zero(dh, N * E);
  for (int64_t r = 0; r < n_out_; ++r)
    std::memcpy(dh + out_rows_[static_cast<size_t>(r)] * E, dhf + r * E,
                static_cast<size_t>(E) * sizeof(float));
  zero(dx, N * E);
  rmsnorm_bwd_parallel(dx, gb(layout_.output_norm), dh, A + glob_.x_final, P + layout_.output_norm, N);

  const float scale = c.attention_scale();
  const kernels::Activation act_fn =
      c.hidden_act == model::HiddenAct::GeluTanh ? kernels::Activation::GeluTanh : kernels::Activation::Silu;
  for (int il = c.n_layer - 1; il >= 0; --il) {
    const LayerLayout& L = layout_.layers[static_cast<size_t>(il)];
    const LayerActs& la = layer_acts_[static_cast<size_t>(il)];
    const float *x = A + la.x, *h1 = A + la.h1, *q = A + la.q, *k = A + la.k, *v = A + la.v,
                *att = A + la.att, *x_mid = A + la.x_mid, *h2 = A + la.h2, *gate = A + la.gate,
                *up = A + la.up, *act = A + la.act, *probs = A + la.probs;
    // x_next = x_mid + down(act), or x_mid + post_norm(down(act)) (sandwich: dh holds d down(act))
    const float* d_down = dx;
    if (c.sandwich_norms) {
      zero(dh, N * E);
      rmsnorm_bwd_parallel(dh, gb(L.ffn_post_norm), dx, A + la.d_raw, P + L.ffn_post_norm, N);
      d_down = dh;
    }
    kernels::linear_backward(dact, F, gb(L.w_down), nullptr, d_down, E, act, F, P + L.w_down, E, F, N, false);
    lora_backward(il, LoraTarget::Down, dact, d_down, act, F, E, N);
#pragma omp parallel num_threads(nt)
    {
      int64_t b, e;
      chunk(N, nt, omp_get_thread_num(), b, e);
      if (e > b)
        kernels::gated_act_backward(dgate + b * F, dup + b * F, dact + b * F, F, gate + b * F, up + b * F, F,
                                    e - b, F, act_fn);
    }
    kernels::linear_backward(dh, E, gb(L.w_gate), nullptr, dgate, F, h2, E, P + L.w_gate, F, E, N, false);
    lora_backward(il, LoraTarget::Gate, dh, dgate, h2, E, F, N);
    kernels::linear_backward(dh, E, gb(L.w_up), nullptr, dup, F, h2, E, P + L.w_up, F, E, N);
    lora_backward(il, LoraTarget::Up, dh, dup, h2, E, F, N);
    rmsnorm_bwd_parallel(dx, gb(L.ffn_norm), dh, x_mid, P + L.ffn_norm, N);
    // x_mid = x + o(att), or x + post_norm(o(att))
    const float* d_o = dx;
    if (c.sandwich_norms) {
      zero(dh, N * E);
      rmsnorm_bwd_parallel(dh, gb(L.attn_post_norm), dx, A + la.o_raw, P + L.attn_post_norm, N);
      d_o = dh;
    }
    kernels::linear_backward(datt, Q, gb(L.wo), gb(L.bo), d_o, E, att, Q, P + L.wo, E, Q, N, false);
    lora_backward(il, LoraTarget::O, datt, d_o, att, Q, E, N);
    const bool slides = c.layer_slides(il);
    const int32_t* row_end = slides ? row_end_sw_.data() : row_end_.data();
    // Attention, parallel over (sequence, key/value head): the query heads of a group add into one dk/dv.
    zero(dq, N * Q);
    zero(dk, N * KV);
    zero(dv, N * KV);
    const auto items = static_cast<int64_t>(S) * HKV;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      const auto s = static_cast<size_t>(item / HKV);
      const int64_t kvh = item % HKV, T = seq_begin_[s + 1] - seq_begin_[s], t0 = seq_begin_[s];
      if (T == 0) continue;
      float* scratch =
          A + glob_.att_scratch +
          int64_t{omp_get_thread_num()} * shape_.max_seq * shape_.max_seq * (c.attn_softcap > 0 ? 2 : 1);
      for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
        kernels::attention_backward_seq(
            dq + t0 * Q + h * D, Q, dk + t0 * KV + kvh * D, dv + t0 * KV + kvh * D, KV, scratch,
            datt + t0 * Q + h * D, Q, probs + H * mask_off_[s] + h * T * T, q + t0 * Q + h * D, Q,
            k + t0 * KV + kvh * D, v + t0 * KV + kvh * D, KV, T, D, scale, row_end + t0, c.attn_softcap);
    }
    // RoPE is a rotation: its backward is the inverse rotation.
    // (With longrope's attention factor the table carries a scale s: forward x → s·R x, backward d → s·Rᵀ d.)
    rope_.apply(dq, Q, A + glob_.cos_t, A + glob_.sin_t, N, H, -1.0f);
    rope_.apply(dk, KV, A + glob_.cos_t, A + glob_.sin_t, N, HKV, -1.0f);
    kernels::linear_backward(dh, E, gb(L.wq), gb(L.bq), dq, Q, h1, E, P + L.wq, Q, E, N, false);
    lora_backward(il, LoraTarget::Q, dh, dq, h1, E, Q, N);
    kernels::linear_backward(dh, E, gb(L.wk), gb(L.bk), dk, KV, h1, E, P + L.wk, KV, E, N);
    lora_backward(il, LoraTarget::K, dh, dk, h1, E, KV, N);
    kernels::linear_backward(dh, E, gb(L.wv), gb(L.bv), dv, KV, h1, E, P + L.wv, KV, E, N);
    lora_backward(il, LoraTarget::V, dh, dv, h1, E, KV, N);
    rmsnorm_bwd_parallel(dx, gb(L.attn_norm), dh, x, P + L.attn_norm, N);
  }
  // dx = dLoss/d(scaled input row): table rows and input rows both get it times the embedding scale.
  input_grads_.assign(S, {});
  for (size_t s = 0; s < S; ++s) {
    const TrainSequence& sq = batch.seqs[s];
    if (!sq.inputs.empty()) input_grads_[s].assign(sq.inputs.size(), 0.0f);
    for (size_t i = 0; i < sq.size(); ++i) {
      const float* d = dx + (seq_begin_[s] + static_cast<int64_t>(i)) * E;
      float* g = nullptr;
      if (!sq.input_row.empty() && sq.input_row[i] >= 0)
        g = input_grads_[s].data() + static_cast<size_t>(sq.input_row[i]) * static_cast<size_t>(E);
      else if (train_base)
        g = G + layout_.tok_embd + static_cast<size_t>(sq.ids[i]) * E;
      if (g)
        for (int64_t j = 0; j < E; ++j) g[j] += d[j] * c.embed_scale;
    }
  }
}

void TrainModel::merge_lora_into_base() {
  if (!lora_enabled()) return;
  for (int il = 0; il < config_.n_layer; ++il) {
    const LayerLayout& L = layout_.layers[static_cast<size_t>(il)];
    const size_t base_off[kLoraTargets] = {L.wq, L.wk, L.wv, L.wo, L.w_gate, L.w_up, L.w_down};
    for (int t = 0; t < kLoraTargets; ++t) {
      const LoraLayerLayout& LL = lora_layout_[static_cast<size_t>(il)];
      if (LL.a[t] == kNoParam) continue;
      const auto [out, in] = lora_target_shape(config_, static_cast<LoraTarget>(t));
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(out), static_cast<int>(in),
                  lora_.rank, lora_.scale(), lora_params_.values.data() + LL.b[t], lora_.rank,
                  lora_params_.values.data() + LL.a[t], static_cast<int>(in), 1.0f,
                  base_.values.data() + base_off[t], static_cast<int>(in));
    }
  }
}

double TrainModel::step_flops(const TrainBatch& batch) const {
  const model::ModelConfig& c = config_;
  const double E = c.n_embd, Q = double(c.n_head) * c.head_dim, KV = double(c.n_head_kv) * c.head_dim,
               F = c.n_ff;
  const double per_tok_layer = 2.0 * (E * Q * 2 + E * KV * 2 + 3 * E * F);
  double visible = 0.0;
  for (const auto& s : batch.seqs)
    for (size_t i = 0; i < s.size(); ++i) visible += s.n_src[i] + s.n_tgt[i];
  const double n_tok = static_cast<double>(batch.n_tokens()), n_lab = static_cast<double>(batch.n_labels());
  // forward = 1×, backward = 2× the forward's FLOPs.
  const double fwd = c.n_layer * (per_tok_layer * n_tok + 4.0 * Q * visible) + 2.0 * E * c.n_vocab * n_lab;
  return 3.0 * fwd;
}

}  // namespace gpstream::train
