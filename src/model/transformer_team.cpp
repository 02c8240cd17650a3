// The decode team: a forward of a few tokens on several threads runs as one parallel region for the whole
// step instead of one per matrix and per attention (~100 per step). Threads that sleep between regions
// pay a wake-up each time (40–55 µs on the reference VM, docs/performance.md); a team that stays awake
// meets at a spinning barrier (util/spin_barrier.h) instead, about seven times per layer, only where one
// step needs another's output. Each matrix is taken in pieces by whichever thread is free
// (kernels/linear_fused.h, linear_share_dynamic), attention is split by (token, head), and each thread
// keeps its own copy of the residual stream, so norms and residual adds need no meeting. Every value is
// computed by the same kernels in the same order as in the per-step path (transformer.cpp): the logits are
// bit for bit those of one thread. Used when the threads fit the processors (spinning needs a core each).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>

#include "kernels/activation.h"
#include "kernels/linear_fused.h"
#include "kernels/norm.h"
#include "model/transformer.h"
#include "util/spin_barrier.h"

namespace gpstream::model {
namespace {

// Up to this many tokens a forward runs as one team: decode steps, re-feeds, scheduler rounds, short
// prefills — wherever every matrix is shared by rows at this token count (linear_share_applies: quantized
// and BF16-paneled weights at any count, plain 16-bit weights up to the few-token kernel's 11). Measured
// on the Scheduler's 16-session rounds of ~19 rows with a paneled BF16 model: +7 % over per-matrix regions.
constexpr int64_t kTeamMaxTokens = 64;
// The gated activation is split at multiples of this many columns.
constexpr int64_t kActAlign = 16;

// Items [first, second) of `count` for thread `id` of `team`.
std::pair<int64_t, int64_t> share_of(int64_t count, int id, int team) {
  return {count * id / team, count * (id + 1) / team};
}

}  // namespace

bool Transformer::team_applies(int64_t n_tok) const {
  // More threads than processors would spin against each other: the per-step path's sleeping waits then win.
  if (n_threads_ < 2 || n_threads_ > omp_get_num_procs() || n_tok > kTeamMaxTokens) return false;
  auto applies = [&](std::initializer_list<kernels::MatrixView> ms) {
    std::vector<kernels::LinearOutput> outs;
    for (const kernels::MatrixView& m : ms) outs.push_back({nullptr, 0, m});
    return kernels::linear_share_applies(outs, n_tok);
  };
  for (const LayerWeights& l : weights_.layers)
    if (!applies({l.wq, l.wk, l.wv}) || !applies({l.wo}) || !applies({l.w_gate, l.w_up}) || !applies({l.w_down}))
      return false;
  return applies({weights_.output});
}

void Transformer::layers_and_head_in_team(const Batch& batch, std::span<KvCache* const> caches, int max_visible,
                                          std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const int64_t T = batch.size();
  const int64_t E = c.n_embd, D = c.head_dim, Q = int64_t{c.n_head} * D, KV = int64_t{c.n_head_kv} * D,
                F = c.n_ff, V = c.n_vocab;
  const int nt = n_threads_;
  Workspace& w = ws_;
  const float off = c.norm_weight_offset;
  const kernels::Activation act =
      c.hidden_act == HiddenAct::GeluTanh ? kernels::Activation::GeluTanh : kernels::Activation::Silu;

  // Per thread: its residual stream x, normalised input h, a sublayer output under a sandwich norm, and
  // the linear kernels' scratch.
  int64_t scratch = 0;
  for (const LayerWeights& l : weights_.layers) {
    const kernels::LinearOutput qkv[] = {{nullptr, 0, l.wq}, {nullptr, 0, l.wk}, {nullptr, 0, l.wv}};
    const kernels::LinearOutput gate_up[] = {{nullptr, 0, l.w_gate}, {nullptr, 0, l.w_up}};
    const kernels::LinearOutput o[] = {{nullptr, 0, l.wo}}, down[] = {{nullptr, 0, l.w_down}};
    scratch = std::max({scratch, kernels::linear_share_scratch_floats(qkv, T),
                        kernels::linear_share_scratch_floats(gate_up, T), kernels::linear_share_scratch_floats(o, T),
                        kernels::linear_share_scratch_floats(down, T)});
  }
  const int64_t n_out = batch.n_logits();
  const kernels::LinearOutput head_sizing[] = {{nullptr, 0, weights_.output}};
  scratch = std::max(scratch, kernels::linear_share_scratch_floats(head_sizing, n_out));
  const int64_t per_thread = 3 * T * E + scratch;
  if (static_cast<int64_t>(w.team.size()) < per_thread * nt) w.team.resize(static_cast<size_t>(per_thread * nt));
  if (static_cast<int64_t>(w.out_hidden.size()) < n_out * E) w.out_hidden.resize(static_cast<size_t>(n_out * E));
  logits.resize(static_cast<size_t>(n_out * V));

  SpinBarrier barrier;
  std::vector<std::atomic<size_t>> next(static_cast<size_t>(4 * c.n_layer + 1));  // each matrix step's progress
#pragma omp parallel num_threads(nt)
  {
    const int id = omp_get_thread_num(), team = omp_get_num_threads();
    auto meet = [&] { barrier.arrive_and_wait(team); };
    float* x = w.team.data() + id * per_thread;
    float* h = x + T * E;
    float* post = h + T * E;
    float* sc = post + T * E;
    std::copy_n(w.x.data(), T * E, x);
    // x += the sublayer output in w.h (normed first under sandwich norms), each thread into its own x.
    auto add_sublayer = [&](const std::vector<float>& post_norm) {
      const float* add = w.h.data();
      if (c.sandwich_norms) {
        kernels::rmsnorm_forward(post, E, w.h.data(), E, post_norm.data(), T, E, c.norm_eps, off);
        add = post;
      }
      for (int64_t i = 0; i < T * E; ++i) x[i] += add[i];
    };
    const auto [item0, item1] = share_of(T * c.n_head, id, team);
    const auto [col0, col1] = share_of(F / kActAlign, id, team);
    const int64_t act0 = col0 * kActAlign, act1 = id + 1 == team ? F : col1 * kActAlign;

    for (int il = 0; il < c.n_layer; ++il) {
      const LayerWeights& L = weights_.layers[il];
      auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
      kernels::rmsnorm_forward(h, E, x, E, L.attn_norm.data(), T, E, c.norm_eps, off);
      const kernels::LinearOutput qkv[] = {{w.q.data(), Q, L.wq, bias(L.bq)},
                                           {w.k.data(), KV, L.wk, bias(L.bk)},
                                           {w.v.data(), KV, L.wv, bias(L.bv)}};
      kernels::linear_share_dynamic(qkv, h, E, T, sc, team, next[4 * il]);
      meet();
      if (id == 0) rotate_and_append(batch, caches, il);  // ~1k floats, not worth splitting
      meet();
      for (int64_t item = item0; item < item1; ++item)
        attend(batch, caches, il, item, w.scores.data() + int64_t{id} * max_visible);
      meet();
      const kernels::LinearOutput o[] = {{w.h.data(), E, L.wo, bias(L.bo)}};
      kernels::linear_share_dynamic(o, w.attn.data(), Q, T, sc, team, next[4 * il + 1]);
      meet();
      add_sublayer(L.attn_post_norm);

      kernels::rmsnorm_forward(h, E, x, E, L.ffn_norm.data(), T, E, c.norm_eps, off);
      const kernels::LinearOutput gate_up[] = {{w.gate.data(), F, L.w_gate, nullptr},
                                               {w.up.data(), F, L.w_up, nullptr}};
      kernels::linear_share_dynamic(gate_up, h, E, T, sc, team, next[4 * il + 2]);
      meet();
      kernels::gated_act_forward(w.gate.data() + act0, F, w.gate.data() + act0, w.up.data() + act0, F, T,
                                 act1 - act0, act);
      meet();
      const kernels::LinearOutput down[] = {{w.h.data(), E, L.w_down, nullptr}};
      kernels::linear_share_dynamic(down, w.gate.data(), F, T, sc, team, next[4 * il + 3]);
      meet();
      add_sublayer(L.ffn_post_norm);
    }

    // Final norm (thread 0, into out_hidden for last_hidden()) and the LM head, for the rows that asked.
    if (id == 0) {
      int64_t r = 0;
      for (int64_t t = 0; t < T; ++t)
        if (batch.tokens[t].logits)
          kernels::rmsnorm_forward(w.out_hidden.data() + r++ * E, E, x + t * E, E, weights_.output_norm.data(), 1,
                                   E, c.norm_eps, off);
    }
    meet();
    const kernels::LinearOutput head[] = {{logits.data(), V, weights_.output, nullptr}};
    kernels::linear_share_dynamic(head, w.out_hidden.data(), E, n_out, sc, team, next[4 * c.n_layer]);
  }
  if (c.final_softcap > 0)
    for (float& z : logits) z = c.final_softcap * std::tanh(z / c.final_softcap);
}

}  // namespace gpstream::model
