// linear_forward_fused (q/k/v and gate/up in one pass) against one linear_forward per output — bit for bit,
// since the fused pass must not change a model's logits — and against the double-precision reference:
// random F32 / F16 / BF16 weights with biases, 1..12 tokens (both regimes), 1 and 2 threads, odd row and
// column counts, padded output strides that must stay untouched, mixed weight types, no scratch; Q8_0 / Q4_0
// against separate calls.
#include "kernels/linear_fused.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"
#include "kernels/linear.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::StoredMatrix;
using gpstream::testing::type_name;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Matrices sharing `cols`, each with a bias, and their outputs (padded by 3 floats per token row).
struct FusedCase {
  int64_t cols = 0;
  std::vector<StoredMatrix> weights;
  std::vector<std::vector<float>> values, biases;

  FusedCase(std::vector<int64_t> rows, int64_t cols_, std::vector<WeightType> types, uint32_t seed)
      : cols(cols_) {
    for (size_t i = 0; i < rows.size(); ++i) {
      values.push_back(
          random_floats(static_cast<size_t>(rows[i] * cols), seed + 17 * static_cast<uint32_t>(i)));
      biases.push_back(random_floats(static_cast<size_t>(rows[i]), seed + 1000 + static_cast<uint32_t>(i)));
      weights.push_back(store_matrix(values.back(), rows[i], cols, types[i]));
    }
  }
  static int64_t ldo(const StoredMatrix& m) { return m.view.rows + 3; }

  // One NaN-filled buffer per output and the LinearOutput list writing into them.
  std::vector<LinearOutput> outputs(std::vector<std::vector<float>>& buffers, int64_t n_tok,
                                    bool with_bias) const {
    std::vector<LinearOutput> outs;
    buffers.clear();
    for (size_t i = 0; i < weights.size(); ++i)
      buffers.emplace_back(static_cast<size_t>(n_tok * ldo(weights[i])), kNaN);
    for (size_t i = 0; i < weights.size(); ++i)
      outs.push_back(
          {buffers[i].data(), ldo(weights[i]), weights[i].view, with_bias ? biases[i].data() : nullptr});
    return outs;
  }
};

// Fused against separate (exact) and against the reference (to the rounding of fp32 accumulation).
void check_case(const FusedCase& fc, const std::string& label, bool null_scratch = false) {
  const int64_t ldx = fc.cols + 5;
  // The stored (widened) weights, as fp32 rows, for the reference bound.
  std::vector<std::vector<float>> stored_rows;
  for (const StoredMatrix& m : fc.weights) {
    if (is_quantized(m.view.type))
      stored_rows.emplace_back();
    else
      stored_rows.push_back(gpstream::testing::matrix_rows_f32(m.view));
  }
  for (int64_t n_tok = 1; n_tok <= 12; ++n_tok) {
    const WeightType type = fc.weights.front().view.type;
    // Without scratch only the F32 paths and the few-token kernel run (the tiled 16-bit path needs it).
    if (null_scratch && type != WeightType::F32 && !linear_takes_few_tokens(type, n_tok)) continue;
    const auto x = random_floats(static_cast<size_t>(n_tok * ldx), 31 + static_cast<uint32_t>(n_tok));
    for (bool with_bias : {true, false}) {
      std::vector<std::vector<float>> ref_buf;
      const auto ref = fc.outputs(ref_buf, n_tok, with_bias);
      for (const LinearOutput& o : ref) linear_forward_ref(o.out, o.ldo, x.data(), ldx, o.w, o.bias, n_tok);
      for (int threads : {1, 2}) {
        const std::string where = label + " n_tok " + std::to_string(n_tok) + " threads " +
                                  std::to_string(threads) + " bias " + std::to_string(with_bias);
        std::vector<std::vector<float>> fused_buf, sep_buf;
        const auto fused = fc.outputs(fused_buf, n_tok, with_bias);
        const auto sep = fc.outputs(sep_buf, n_tok, with_bias);
        std::vector<float> scratch(
            static_cast<size_t>(std::max<int64_t>(1, linear_fused_scratch_floats(fused, n_tok, threads))),
            kNaN);
        float* sc = null_scratch ? nullptr : scratch.data();
        linear_forward_fused(fused, x.data(), ldx, n_tok, sc, threads);
        for (const LinearOutput& o : sep)
          linear_forward(o.out, o.ldo, x.data(), ldx, o.w, o.bias, n_tok, sc, threads);
        for (size_t i = 0; i < fused.size(); ++i) {
          const int64_t rows = fc.weights[i].view.rows, ldo = FusedCase::ldo(fc.weights[i]);
          for (int64_t t = 0; t < n_tok; ++t) {
            for (int64_t r = 0; r < ldo; ++r) {
              const size_t at = static_cast<size_t>(t * ldo + r);
              const float got = fused_buf[i][at];
              if (r >= rows) {
                ASSERT_TRUE(std::isnan(got)) << where << ": wrote padding of output " << i << " at t " << t;
                continue;
              }
              ASSERT_EQ(got, sep_buf[i][at]) << where << ": output " << i << " t " << t << " r " << r;
              if (threads != 2) continue;  // the reference once per case is enough: both thread counts agree
              // Quantized rows meet Q8_0 activations, which the fp reference does not model; the int8
              // kernels have their own reference tests (quant_dot_test.cpp).
              if (is_quantized(fc.weights[i].view.type)) continue;
              // fp32 sum of cols terms of the stored (widened) weights and the bias against the double
              // reference rounded to fp32: γ_{cols+1}(Σ|x ŵ| + |b|) + u·|ref| (Higham (3.5)).
              const double tol = gpstream::testing::linear_output_bound(
                  x.data() + t * ldx, stored_rows[i].data() + r * fc.cols, fc.cols,
                  with_bias ? fc.biases[i][static_cast<size_t>(r)] : 0.0, ref_buf[i][at]);
              ASSERT_NEAR(got, ref_buf[i][at], tol) << where << ": output " << i << " t " << t << " r " << r;
            }
          }
        }
      }
    }
  }
}

const WeightType kTypes[] = {WeightType::F32, WeightType::F16, WeightType::BF16};

// q/k/v-like: a large matrix and two small ones, odd row counts (a thread's share may end on an odd row
// only at a matrix's end) and 101 columns (vector tails). Small enough to run on one thread.
TEST(LinearFused, SmallQkvEqualsSeparateCalls) {
  for (WeightType type : kTypes)
    check_case(FusedCase({67, 9, 9}, 101, {type, type, type}, 3), type_name(type));
}

// Large enough (rows × cols ≥ 2^18 at one token) for the two threads to split the concatenated rows
// from one token on, with the split falling inside a matrix.
TEST(LinearFused, ThreadedQkvEqualsSeparateCalls) {
  for (WeightType type : kTypes)
    check_case(FusedCase({560, 32, 31}, 449, {type, type, type}, 5), type_name(type));
}

// gate/up-like: two equal odd-row matrices (split over two threads from two tokens on).
TEST(LinearFused, ThreadedGateUpEqualsSeparateCalls) {
  for (WeightType type : kTypes) check_case(FusedCase({151, 151}, 450, {type, type}, 7), type_name(type));
}

// Mixed storage types: each prepares its own activations in the same pass (or, past the F32 few-token
// limit, one linear_forward per output), same results.
TEST(LinearFused, MixedTypes) {
  check_case(FusedCase({300, 32, 31}, 449, {WeightType::BF16, WeightType::F16, WeightType::F32}, 9), "mixed");
}

// Quantized rows (GGUF Q8_0 / Q4_0, at any token count) split like the others, alone and mixed with BF16;
// 448 columns = 14 blocks of 32. Shares start at multiples of four rows, where the int8 kernel's groups of
// four rows start when it runs over a whole matrix.
TEST(LinearFused, QuantizedEqualsSeparateCalls) {
  for (WeightType type : {WeightType::Q8_0, WeightType::Q4_0})
    check_case(FusedCase({562, 34, 31}, 448, {type, type, type}, 15), type_name(type));
  check_case(FusedCase({300, 32, 31}, 448, {WeightType::Q4_0, WeightType::BF16, WeightType::Q8_0}, 17),
             "quantized and BF16");
}

// No scratch (as the speech encoder and the trainer pass for F32): BF16 reorders into a per-thread buffer.
TEST(LinearFused, WithoutScratch) {
  for (WeightType type : {WeightType::F32, WeightType::BF16})
    check_case(FusedCase({300, 32, 31}, 449, {type, type, type}, 11),
               std::string(type_name(type)) + " no scratch",
               /*null_scratch=*/true);
}

// linear_share_dynamic: two threads taking guided pieces of 64 KB and more from a shared counter give the
// rows of separate calls, bit for bit, for the fp types and the quantized ones, at 1..8 tokens.
TEST(LinearFused, DynamicSharesEqualSeparateCalls) {
  const std::vector<std::pair<WeightType, int64_t>> cases = {{WeightType::BF16, 449},
                                                             {WeightType::F32, 449},
                                                             {WeightType::F16, 449},
                                                             {WeightType::Q8_0, 448},
                                                             {WeightType::Q4_0, 448}};
  for (const auto& [type, cols] : cases) {
    const FusedCase fc({1202, 34, 31}, cols, {type, type, type}, 19);
    for (int64_t n_tok = 1; n_tok <= 8; ++n_tok) {
      if (!is_quantized(type) && !linear_takes_few_tokens(type, n_tok)) continue;
      const auto x = random_floats(static_cast<size_t>(n_tok * cols), 23 + static_cast<uint32_t>(n_tok));
      std::vector<std::vector<float>> dyn_buf, sep_buf;
      const auto dyn = fc.outputs(dyn_buf, n_tok, true);
      const auto sep = fc.outputs(sep_buf, n_tok, true);
      ASSERT_TRUE(linear_share_applies(dyn, n_tok));
      const int64_t per_thread = linear_share_scratch_floats(dyn, n_tok);
      std::vector<float> scratch(static_cast<size_t>(2 * std::max<int64_t>(1, per_thread)), kNaN);
      std::atomic<size_t> next{0};
      int team_seen = 0;
#pragma omp parallel num_threads(2)
      {
        const int id = omp_get_thread_num();
        if (id == 0) team_seen = omp_get_num_threads();
        linear_share_dynamic(dyn, x.data(), cols, n_tok, scratch.data() + id * per_thread,
                             omp_get_num_threads(), next);
      }
      EXPECT_EQ(team_seen, 2);
      std::vector<float> sep_scratch(
          static_cast<size_t>(std::max<int64_t>(1, linear_fused_scratch_floats(sep, n_tok, 1))), kNaN);
      for (const LinearOutput& o : sep)
        linear_forward(o.out, o.ldo, x.data(), cols, o.w, o.bias, n_tok, sep_scratch.data(), 1);
      for (size_t i = 0; i < dyn_buf.size(); ++i)
        for (size_t j = 0; j < dyn_buf[i].size(); ++j) {
          if (std::isnan(sep_buf[i][j])) {
            ASSERT_TRUE(std::isnan(dyn_buf[i][j])) << type_name(type) << " wrote padding";
            continue;
          }
          ASSERT_EQ(dyn_buf[i][j], sep_buf[i][j])
              << type_name(type) << " n_tok " << n_tok << " output " << i << " at " << j;
        }
    }
  }
}

TEST(LinearFused, NoOutputsOrNoTokensIsANoOp) {
  linear_forward_fused({}, nullptr, 0, 3, nullptr, 2);
  FusedCase fc({5, 3}, 7, {WeightType::BF16, WeightType::BF16}, 13);
  std::vector<std::vector<float>> buf;
  const auto outs = fc.outputs(buf, 1, true);
  linear_forward_fused(outs, nullptr, 7, 0, nullptr, 2);
  for (const auto& b : buf)
    for (float v : b) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace gpstream::kernels
