// The transformer block, written once for inference (private to model/: transformer.cpp and
// transformer_team.cpp include it). An executor decides how each step is spread over threads:
//   linear(outputs, x, ldx, n_tok, step)  the matrix products of one step (step: its index in the forward,
//                                         for executors that track progress per step)
//   serially(fn)                           fn once, on one thread
//   attention(fn, n_tok)                   fn(item, scores) for every (token, head) work item
//   gated_activation(gate, up, ld, n_tok)  gate ← act(gate) · up over [n_tok, n_ff]
// and returns only when the step's results are visible to every thread. The per-step executor
// (transformer.cpp) opens one parallel region per step; the decode team (transformer_team.cpp) keeps one
// region for the whole forward and meets at a barrier. Both run the same kernels in the same order, so their
// logits are bit for bit equal (DecodeTeam tests).
#pragma once

#include "kernels/activation.h"
#include "kernels/linear_fused.h"
#include "kernels/norm.h"
#include "model/transformer.h"

namespace gpstream::model {

// Index of a layer's matrix steps in a forward (the executor's `step`): four per layer, then the LM head.
constexpr int kMatrixStepsPerLayer = 4;

inline kernels::Activation gated_activation_of(const ModelConfig& c) {
  return c.hidden_act == HiddenAct::GeluTanh ? kernels::Activation::GeluTanh : kernels::Activation::Silu;
}

template <typename Executor>
void Transformer::run_block(Executor& ex, const Batch& batch, std::span<KvCache* const> caches, int il,
                            float* x, float* h, float* post) {
  const ModelConfig& c = config_;
  Workspace& w = ws_;
  const LayerWeights& L = weights_.layers[il];
  const int64_t T = batch.size(), E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim,
                KV = int64_t{c.n_head_kv} * c.head_dim, F = c.n_ff;
  const float off = c.norm_weight_offset;
  const int step = kMatrixStepsPerLayer * il;
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
  // x += the sublayer output in w.h, normed first (into post) under sandwich norms. post may be w.h itself.
  auto add_sublayer = [&](const std::vector<float>& post_norm) {
    const float* add = w.h.data();
    if (c.sandwich_norms) {
      kernels::rmsnorm_forward(post, E, w.h.data(), E, post_norm.data(), T, E, c.norm_eps, off);
      add = post;
    }
    for (int64_t i = 0; i < T * E; ++i) x[i] += add[i];
  };

  kernels::rmsnorm_forward(h, E, x, E, L.attn_norm.data(), T, E, c.norm_eps, off);
  const kernels::LinearOutput qkv[] = {{w.q.data(), Q, L.wq, bias(L.bq)},
                                       {w.k.data(), KV, L.wk, bias(L.bk)},
                                       {w.v.data(), KV, L.wv, bias(L.bv)}};
  ex.linear(qkv, h, E, T, step);
  ex.serially([&] { rotate_and_append(batch, caches, il); });
  ex.attention([&](int64_t item, float* scores) { attend(batch, caches, il, item, scores); }, T);
  const kernels::LinearOutput o[] = {{w.h.data(), E, L.wo, bias(L.bo)}};
  ex.linear(o, w.attn.data(), Q, T, step + 1);
  add_sublayer(L.attn_post_norm);

  kernels::rmsnorm_forward(h, E, x, E, L.ffn_norm.data(), T, E, c.norm_eps, off);
  const kernels::LinearOutput gate_up[] = {{w.gate.data(), F, L.w_gate, nullptr},
                                           {w.up.data(), F, L.w_up, nullptr}};
  ex.linear(gate_up, h, E, T, step + 2);
  ex.gated_activation(w.gate.data(), w.up.data(), F, T);
  const kernels::LinearOutput down[] = {{w.h.data(), E, L.w_down, nullptr}};
  ex.linear(down, w.gate.data(), F, T, step + 3);
  add_sublayer(L.ffn_post_norm);
}

}  // namespace gpstream::model
