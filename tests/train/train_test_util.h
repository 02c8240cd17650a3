// Helpers for the train/ tests: tiny models, hand-built group layouts, double-precision losses through
// tests/model/reference_transformer.h (an implementation independent of src/train and src/kernels).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../model/reference_transformer.h"
#include "../model/tiny_models.h"
#include "../testing/forward_bounds.h"
#include "train/train_model.h"

namespace gpstream::testing {

// gpe.md §4 group layout, wait-k with k = 2: prompt of 2 tokens, source words of 1/2/1/1 tokens and an end
// marker; target: header of 2 tokens, words of 2/1/1 tokens and an end marker, positions φ, φ+1, ...;
// labels on the rows predicting target word tokens and the end marker (not the header).
inline train::TrainSequence group_sequence(uint64_t seed, int n_vocab, float phi) {
  train::TrainSequence s;
  uint64_t x = seed * 2654435761u + 12345;
  auto next_id = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(n_vocab));
  };
  const int n_source = 8;
  for (int i = 0; i < n_source; ++i) s.push(next_id(), static_cast<float>(i), 0, i + 1, 0, -1);
  // target rows: header h1 h2, words t1a t1b, t2, t3, end Et; visibility (n_src) per the README fixture.
  const int n_src[7] = {5, 5, 5, 6, 7, 8, 8};
  std::vector<int32_t> tgt(7);
  for (int32_t& t : tgt) t = next_id();
  for (int r = 0; r < 7; ++r) {
    // row r predicts target token r+1; the header's first row predicts the header's second (not trained)
    const int32_t label = (r >= 1 && r + 1 < 7) ? tgt[static_cast<size_t>(r) + 1] : -1;
    s.push(tgt[static_cast<size_t>(r)], phi + static_cast<float>(r), 1, n_src[r], r + 1, label);
  }
  return s;
}

inline std::vector<std::vector<bool>> dense_mask(const train::TrainSequence& s) {
  const size_t T = s.size();
  std::vector<int> rank(T);
  int cnt[2] = {0, 0};
  for (size_t j = 0; j < T; ++j) rank[j] = cnt[s.groups[j]]++;
  std::vector<std::vector<bool>> m(T, std::vector<bool>(T));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j) m[i][j] = s.groups[j] ? rank[j] < s.n_tgt[i] : rank[j] < s.n_src[i];
  return m;
}

// LoRA's chain rule: with W' = W + s·B·A, dL/dA = s·Bᵀ·dL/dW' and dL/dB = s·dL/dW'·Aᵀ. Compares the adapter
// gradients gA [r, in], gB [out, r] with those derived from a full model's weight gradient dW [out, in]
// (double sums), entry by entry, against the sum of
//  - the adapter gradient's own rounding: gamma_lora (backward_order_gamma of the LoRA model) times its
//    tensor's largest entry (gradient_magnitude: the bound is normwise);
//  - the rounding of dW carried through the chain product: s·Σ_o |B_oi| · gamma_full · max|dW| for dA,
//    s·Σ_j max|dW| |A_ij| for dB;
//  - the product's own double sum, as dot_error_bound: γ_{out+2}(u₆₄) s Σ_o |B_oi dW_oj| (two products per
//    term), γ_{in+2}(u₆₄) for dB.
// The second term is the largest: dW's rounding, amplified by s·Σ|B_oi| (s·Σ|A_ij|), puts the bound above a
// fraction of the adapter gradient's own size at its largest entries. Keeps the largest error, its bound,
// and the largest ratio of the two.
struct ChainRuleCheck {
  double gamma_lora = 0, gamma_full = 0;
  double worst = 0, worst_bound = 0, ratio = 0;
  void note(double err, double bound) {
    if (err > worst) worst = err, worst_bound = bound;
    ratio = std::max(ratio, err / bound);
  }
  void add(const float* A, const float* B, const float* dW, int64_t out, int64_t in, int64_t r, float s,
           const float* gA, const float* gB) {
    const double mA = gradient_magnitude({gA, static_cast<size_t>(r * in)}),
                 mB = gradient_magnitude({gB, static_cast<size_t>(out * r)}),
                 mW = gradient_magnitude({dW, static_cast<size_t>(out * in)});
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < in; ++j) {
        double want = 0, abs_b = 0, abs_terms = 0;
        for (int64_t o = 0; o < out; ++o) {
          want += s * double(B[o * r + i]) * dW[o * in + j];
          abs_b += std::fabs(double(B[o * r + i]));
          abs_terms += std::fabs(double(B[o * r + i]) * dW[o * in + j]);
        }
        const double bound =
            gamma_lora * mA + s * abs_b * gamma_full * mW + gamma_n(out + 2, kUnitF64) * s * abs_terms;
        note(std::abs(want - gA[i * in + j]), bound);
      }
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < r; ++i) {
        double want = 0, abs_a = 0, abs_terms = 0;
        for (int64_t j = 0; j < in; ++j) {
          want += s * double(dW[o * in + j]) * A[i * in + j];
          abs_a += std::fabs(double(A[i * in + j]));
          abs_terms += std::fabs(double(dW[o * in + j]) * A[i * in + j]);
        }
        const double bound =
            gamma_lora * mB + s * abs_a * gamma_full * mW + gamma_n(in + 2, kUnitF64) * s * abs_terms;
        note(std::abs(want - gB[o * r + i]), bound);
      }
  }
};

// Token-mean cross-entropy of the batch in double through the reference forward.
inline double reference_loss(const model::ModelConfig& c, const io::TensorMap& w,
                             const train::TrainBatch& b) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& s : b.seqs) {
    std::vector<RefToken> toks;
    for (size_t i = 0; i < s.size(); ++i) toks.push_back({s.ids[i], static_cast<double>(s.positions[i])});
    const LabelLoss l = reference_label_loss(reference_forward(c, w, toks, dense_mask(s)), s.labels);
    sum += l.sum;
    n += l.rows;
  }
  return sum / static_cast<double>(n);
}

}  // namespace gpstream::testing
