// Rounding-error bounds of whole transformer forwards (fp_bounds.h for the arithmetic): how far two fp32
// forwards of one model, or one forward and an exact reference, may differ — the tolerance of every test
// that compares cached K/V, logits or losses of two ways of running the same rows; and of the training
// backward's gradients against the exact gradient (backward_order_gamma).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "fp_bounds.h"
#include "model/model_config.h"
#include "model/weights.h"

namespace gpstream::testing {

// max_r ‖W_r ∘ g‖₂ · √E: a bound on Σ_j |W_rj| |x̂_j| for x̂ = g ∘ h / rms(h) over any h, as
// ‖h / rms(h)‖₂ ≤ √E (Cauchy–Schwarz) — the magnitude of a linear layer fed by an RMSNorm.
inline double normed_linear_magnitude(const kernels::MatrixView& w, std::span<const float> g, float g_offset,
                                      std::span<const float> bias = {}) {
  const std::vector<float> rows = matrix_rows_f32(w);
  double m = 0;
  for (int64_t r = 0; r < w.rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < w.cols; ++j) {
      const double wg = static_cast<double>(rows[r * w.cols + j]) * (g[j] + g_offset);
      ss += wg * wg;
    }
    const double b = bias.empty() ? 0.0 : std::fabs(bias[r]);
    m = std::max(m, std::sqrt(ss) * std::sqrt(static_cast<double>(w.cols)) + b);
  }
  return m;
}

// How far two fp32 forwards of one model over the same rows may differ when they sum the linear layers in
// different orders (a per-step forward on the few-token kernel against one batched forward on OpenBLAS
// sgemm, whose kernel — Haswell or SkylakeX — depends on the CPU), or one fp32 forward from an exact
// (double) reference: per layer, the cached K and V entries, and the logits.
//  - Two fp32 forwards run the same per-row code for norms, RoPE, attention and activations, so identical
//    inputs give identical bits; only the linear layers' dots are summed in other orders: each output
//    differs by ≤ 2γ_n Σ|W_rj||x_j| (Higham (3.5), both within γ_n of exact). Against a reference (one γ,
//    not two) or another implementation of them (shared_code = false, e.g. the training forward), every
//    operation counts: the norms' sums of squares (n_embd each), softmax's sum and
//    P·V (the visible rows each) and a few ulps of elementwise work per layer (kElementwiseRoundings)
//    count too; RoPE angles are taken in double (kernels/rope.cpp), so RoPE adds only its table's and its
//    rotation's roundings.
//  - To first order, relative errors add along a chain of roundings (Higham Lemma 3.3: (1+θ_j)(1+θ_k) =
//    1+θ_{j+k}), and RMSNorm rescales its input to unit rms, passing the relative error on. So an entry
//    whose dependence path crosses dots of lengths n_1..n_m has relative error ≤ γ_{n_1+…+n_m} of the
//    magnitude of the last dot. Each layer adds q/k/v (n_embd), the score q·k (head_dim: q and k carry
//    their error into it like a dot of that length; softmax and P·V are convex combinations), o
//    (n_head·head_dim), gate/up (n_embd) and down (n_ff).
//  - The last dot's magnitude Σ_j |W_rj||x̂_j| ≤ max_r ‖W_r ∘ g‖₂ √E (normed_linear_magnitude). RoPE mixes
//    pairs (|cos| + |sin| ≤ √2) and scales by the rope scale; Gemma 2's soft-caps (c·tanh(x/c)) have slope
//    ≤ 1 and its embedding scale is undone by the first norm.
struct ForwardOrderBound {
  std::vector<double> k, v;       // per layer, any entry of the cached K / V
  std::vector<double> attention;  // per layer, any attention probability (Transformer's attention tap)
  double logits = 0;              // any logit
  double loss = 0;                // a token-mean cross-entropy over those logits
};

struct ForwardBoundOptions {
  bool against_reference = false;  // one fp32 forward against an exact reference instead of two fp32 forwards
  bool shared_code = true;         // two fp32 forwards: the same norm/attention/activation code on both sides
  int64_t max_rows = 0;            // against a reference or other code: the most rows one row attends to
  double extra_roundings = 0;      // further relative error per layer, in units of u (e.g. an fp16 table)
};

// Elementwise roundings per layer outside the dots when the two sides do not share code: exp (fast_exp,
// ≈ 2e-7 ≈ 4u), the softmax division, rsqrt of the norms, the RoPE table and rotation (3), SiLU/GELU (exp
// and a division), the gate·up product, soft-cap tanh, the residual adds: 16 roundings of u.
inline constexpr int64_t kElementwiseRoundings = 16;

inline ForwardOrderBound forward_order_bound(const model::ModelConfig& c, const model::Weights& w,
                                             const ForwardBoundOptions& o = {}) {
  const int64_t E = c.n_embd, Q = static_cast<int64_t>(c.n_head) * c.head_dim;
  int64_t per_layer = E + c.head_dim + Q + E + c.n_ff + static_cast<int64_t>(std::ceil(o.extra_roundings));
  int64_t before_kv = 0, before_head = 0;  // the norm feeding K/V or the LM head, against a reference
  if (o.against_reference || !o.shared_code) {
    const int64_t norms = c.sandwich_norms ? 4 : 2;
    per_layer += norms * E + 2 * o.max_rows + kElementwiseRoundings;
    before_kv = E + kElementwiseRoundings;
    before_head = E + kElementwiseRoundings;
  }
  const double sides = o.against_reference ? 1.0 : 2.0;
  const float off = c.norm_weight_offset;
  const double rope_gain = std::sqrt(2.0) * std::max(1.0f, c.rope_scaling.attention_factor);
  ForwardOrderBound b;
  for (int l = 0; l < c.n_layer; ++l) {
    const auto& L = w.layers[static_cast<size_t>(l)];
    const double rel = sides * gamma_n(l * per_layer + before_kv + E);
    b.k.push_back(rel * rope_gain * normed_linear_magnitude(L.wk, L.attn_norm, off, L.bk));
    b.v.push_back(rel * normed_linear_magnitude(L.wv, L.attn_norm, off, L.bv));
    // A score s = scale Σ_i q_i k_i over head_dim terms, q and k each within rel of their magnitudes
    // (q's bound as k's: the same norm, path and RoPE): |Δs| ≤ scale·D·Mq·Mk·(2 rel + γ_D), the soft-cap's
    // slope ≤ 1. Softmax moves p_j by p_j(Δs_j − Σ_i p_i Δs_i), at most 2 max|Δs|; its own exps, sum over
    // the visible rows and division add γ_{max_rows + 6} relative to p ≤ 1.
    const double mq = rope_gain * normed_linear_magnitude(L.wq, L.attn_norm, off, L.bq);
    const double mk = rope_gain * normed_linear_magnitude(L.wk, L.attn_norm, off, L.bk);
    const double ds = c.attention_scale() * static_cast<double>(c.head_dim) * mq * mk *
                      (2.0 * rel + sides * gamma_n(c.head_dim));
    b.attention.push_back(2.0 * ds + sides * gamma_n(o.max_rows + 6));
  }
  const double head = normed_linear_magnitude(w.output, w.output_norm, off);
  b.logits = sides * gamma_n(c.n_layer * per_layer + before_head + E) * head;
  // Cross-entropy lse(z) − z_y moves by ≤ 2 max|Δz| (both terms 1-Lipschitz in max|Δz|); in fp32 its n_vocab
  // exps and their sum, the log and the subtractions add γ_{n_vocab+4} (absolute, through the log) and
  // u(|lse| + |z_y|) ≤ u(2·head + ln n_vocab), |z| ≤ head; a mean of such terms keeps the bound.
  b.loss = 2.0 * b.logits + sides * (gamma_n(c.n_vocab + 4) +
                                     kUnitF32 * (2.0 * head + std::log(static_cast<double>(c.n_vocab))));
  return b;
}

// How many roundings of u one entry of TrainModel's fp32 gradient may carry against the exact gradient of
// the same parameters (its γ index; first order, Higham Lemma 3.3: relative errors add along a chain).
// An entry is the last dot of a backward signal and a forward activation — Σ_n dy_nr x_nj over the batch's
// rows for a weight, Σ_n dh_nj x̂_nj for a norm weight, the rows of one id for an embedding row — and each
// factor carries the relative error of the dots its value went through:
//  - the forward to the loss (against an exact reference, as forward_order_bound): per layer q/k/v (E),
//    the score (head_dim), o (n_head·head_dim), gate/up (E), down (n_ff), the norms' sums of squares (E
//    each), softmax's sum and P·V (the visible rows each) and kElementwiseRoundings; then the final norm
//    (E), its elementwise work and the final soft-cap (kElementwiseRoundings), the LM head (E) and the
//    cross-entropy's softmax (n_vocab + 4);
//  - the backward from the loss: softmax − one-hot (n_vocab + 4), the soft-cap's slope and the loss scale
//    (kElementwiseRoundings), the LM head's transpose (n_vocab), the final norm's backward (its x̂·dh dot,
//    E); per layer down's transpose (E), gate/up's (2·n_ff, both
//    summed into one signal), the norms' backwards (E each, sandwich norms two more), o's transpose (E),
//    attention's backward (dP = dO·V: head_dim; dS = P∘(dP − Σ P·dP): the visible rows; dq = dS·K: the
//    visible rows; dk or dv: the visible rows of every query head of the group), RoPE's inverse rotation
//    and the activations' slopes (kElementwiseRoundings), q/k/v's transposes (n_head·head_dim +
//    2·n_head_kv·head_dim);
//  - the last dot itself (n_rows) and the loss scale, the embedding scale and the add into grads (3).
// A LoRA adapter adds its branch s·B(A x) beside a linear (its A dot is no longer than the linear's, then
// rank and the add: rank + 1 more on each of the 4 linears a path crosses per layer, forward and backward),
// and its own gradients one more dot before the last (Bᵀdy for dA, A x for dB: ≤ max(n_embd, n_ff, n_head·
// head_dim)). Every chain from the loss to an entry is counted in full, so the sum bounds the longest.
struct BackwardBoundOptions {
  int64_t n_rows = 0;    // rows of the batch (the last dot of a weight's gradient sums over them)
  int64_t max_rows = 0;  // the most rows one row attends to
  int lora_rank = 0;     // LoRA adapters on the linears (0: full fine-tuning)
  int64_t extra = 0;     // further roundings on every chain (e.g. weights merged in fp32: rank + 1)
};

inline int64_t backward_order_length(const model::ModelConfig& c, const BackwardBoundOptions& o) {
  const int64_t E = c.n_embd, D = c.head_dim, Q = static_cast<int64_t>(c.n_head) * D,
                KV = static_cast<int64_t>(c.n_head_kv) * D, F = c.n_ff, V = c.n_vocab, T = o.max_rows,
                group = c.n_head / c.n_head_kv, norms = c.sandwich_norms ? 4 : 2;
  const int64_t lora = o.lora_rank > 0 ? 4 * (o.lora_rank + 1) : 0;
  const int64_t fwd_layer = E + D + Q + E + F + norms * E + 2 * T + kElementwiseRoundings + lora;
  const int64_t fwd_top = E + kElementwiseRoundings + E + V + 4;
  const int64_t bwd_layer =
      E + 2 * F + norms * E + E + D + 2 * T + group * T + kElementwiseRoundings + Q + 2 * KV + lora;
  const int64_t bwd_top = V + 4 + V + E + kElementwiseRoundings;
  const int64_t last = o.n_rows + 3 + (o.lora_rank > 0 ? std::max({E, F, Q}) : 0);
  return c.n_layer * (fwd_layer + bwd_layer) + fwd_top + bwd_top + last + o.extra;
}

// The relative error γ of backward_order_length.
inline double backward_order_gamma(const model::ModelConfig& c, const BackwardBoundOptions& o) {
  return gamma_n(backward_order_length(c, o));
}

// The magnitude γ multiplies: an entry's error is γ times the magnitude of its terms, Σ_n |dy_nr||x_nj|
// (and, through the signals, of the dots before it). The signals and activations live in TrainModel's
// activation block, which a test cannot read; the entries of one tensor all sum the same signals against
// the same activations, so their terms share one scale, which the tensor's largest gradient entry attains
// unless its own rows cancel: the bound is normwise, γ·max_i|ĝ_i| for every entry (as Higham's bounds for
// products, ‖fl(AB) − AB‖ ≤ γ_n ‖|A||B|‖), not relative to an entry's own value, which cancellation may
// make arbitrarily small. max|ĝ| and max|g| differ by γ·max|g|, second order in the bound.
inline double gradient_magnitude(std::span<const float> grad) {
  double m = 0;
  for (float v : grad) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

// |Σ_i (ĝ_i − g_i) d_i| over one tensor, ĝ its fp32 gradient with relative error gamma
// (backward_order_gamma): ≤ Σ_i |ĝ_i − g_i||d_i| ≤ γ · max_i|ĝ_i| · Σ_i |d_i|.
inline double gradient_projection_bound(double gamma, std::span<const float> grad,
                                        std::span<const float> dir) {
  GPS_ASSERT(grad.size() == dir.size(), "gradient_projection_bound: lengths differ");
  double l1 = 0;
  for (float v : dir) l1 += std::fabs(static_cast<double>(v));
  return gamma * gradient_magnitude(grad) * l1;
}

}  // namespace gpstream::testing
