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
#include "model/transformer_block.h"
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

// The decode team's executor of the block (transformer_block.h): every thread of the one parallel region runs
// every step; matrix products are shared dynamically, attention and the activation split statically, and
// the threads meet at the barrier after each step whose output another thread reads.
struct TeamExecutor {
  int id, team;
  SpinBarrier& barrier;
  std::vector<std::atomic<size_t>>& next;
  float* scratch;
  float* scores;
  int64_t item0, item1;  // this thread's (token, head) work items
  int64_t act0, act1;    // this thread's activation columns
  kernels::Activation act;

  void meet() { barrier.arrive_and_wait(team); }
  void linear(std::span<const kernels::LinearOutput> outs, const float* x, int64_t ldx, int64_t n_tok,
              int step) {
    kernels::linear_share_dynamic(outs, x, ldx, n_tok, scratch, team, next[static_cast<size_t>(step)]);
    meet();
  }
  template <typename Fn>
  void serially(Fn&& fn) {  // ~1k floats of rope and cache appends: not worth splitting
    if (id == 0) fn();
    meet();
  }
  template <typename Fn>
  void attention(Fn&& fn, int64_t) {
    for (int64_t item = item0; item < item1; ++item) fn(item, scores);
    meet();
  }
  void gated_activation(float* gate, const float* up, int64_t ld, int64_t n_tok) {
    kernels::gated_act_forward(gate + act0, ld, gate + act0, up + act0, ld, n_tok, act1 - act0, act);
    meet();
  }
};

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
    if (!applies({l.wq, l.wk, l.wv}) || !applies({l.wo}) || !applies({l.w_gate, l.w_up}) ||
        !applies({l.w_down}))
      return false;
  return applies({weights_.output});
}

void Transformer::layers_and_head_in_team(const Batch& batch, std::span<KvCache* const> caches,
                                          int max_visible, std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const int64_t T = batch.size();
  const int64_t E = c.n_embd, F = c.n_ff, V = c.n_vocab;
  const int nt = n_threads_;
  Workspace& w = ws_;

  // Per thread: its residual stream x, normalised input h, a sublayer output under a sandwich norm, and
  // the linear kernels' scratch.
  int64_t scratch = 0;
  for (const LayerWeights& l : weights_.layers) {
    const kernels::LinearOutput qkv[] = {{nullptr, 0, l.wq}, {nullptr, 0, l.wk}, {nullptr, 0, l.wv}};
    const kernels::LinearOutput gate_up[] = {{nullptr, 0, l.w_gate}, {nullptr, 0, l.w_up}};
    const kernels::LinearOutput o[] = {{nullptr, 0, l.wo}}, down[] = {{nullptr, 0, l.w_down}};
    scratch =
        std::max({scratch, kernels::linear_share_scratch_floats(qkv, T),
                  kernels::linear_share_scratch_floats(gate_up, T),
                  kernels::linear_share_scratch_floats(o, T), kernels::linear_share_scratch_floats(down, T)});
  }
  const int64_t n_out = batch.n_logits();
  const kernels::LinearOutput head_sizing[] = {{nullptr, 0, weights_.output}};
  scratch = std::max(scratch, kernels::linear_share_scratch_floats(head_sizing, n_out));
  const int64_t per_thread = 3 * T * E + scratch;
  if (static_cast<int64_t>(w.team.size()) < per_thread * nt)
    w.team.resize(static_cast<size_t>(per_thread * nt));
  if (static_cast<int64_t>(w.out_hidden.size()) < n_out * E)
    w.out_hidden.resize(static_cast<size_t>(n_out * E));
  logits.resize(static_cast<size_t>(n_out * V));

  SpinBarrier barrier;
  // Each matrix step's progress: four per layer, then the LM head.
  std::vector<std::atomic<size_t>> next(static_cast<size_t>(kMatrixStepsPerLayer * c.n_layer + 1));
#pragma omp parallel num_threads(nt)
  {
    const int id = omp_get_thread_num(), team = omp_get_num_threads();
    float* x = w.team.data() + id * per_thread;
    float* h = x + T * E;
    float* post = h + T * E;
    float* sc = post + T * E;
    std::copy_n(w.x.data(), T * E, x);
    const auto [item0, item1] = share_of(T * c.n_head, id, team);
    const auto [col0, col1] = share_of(F / kActAlign, id, team);
    TeamExecutor ex{id,
                    team,
                    barrier,
                    next,
                    sc,
                    w.scores.data() + int64_t{id} * max_visible,
                    item0,
                    item1,
                    col0 * kActAlign,
                    id + 1 == team ? F : col1 * kActAlign,
                    gated_activation_of(c)};
    for (int il = 0; il < c.n_layer; ++il) run_block(ex, batch, caches, il, x, h, post);
    ex.serially([&] { norm_output_rows(batch, x); });  // final norm of the rows that asked, into out_hidden
    const kernels::LinearOutput head[] = {{logits.data(), V, weights_.output, nullptr}};
    kernels::linear_share_dynamic(head, w.out_hidden.data(), E, n_out, sc, team,
                                  next[kMatrixStepsPerLayer * c.n_layer]);
  }
  cap_logits(logits);
}

}  // namespace gpstream::model
