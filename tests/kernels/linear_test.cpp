// linear_forward (all three regimes: F32 sgemm, 16-bit small-batch dot products, 16-bit tiled GEMM)
// against linear_forward_ref on odd shapes, token counts on both sides of the small-batch threshold,
// row strides with padding that must stay untouched, bias on and off, 1 and 2 threads. The reference
// itself is checked against a product worked out by hand.
#include "kernels/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::type_name;

TEST(LinearRef, HandComputedProduct) {
  // W = [[1, 2, 3], [-1, 0, 0.5]], x = [[1, 1, 1], [2, -1, 4]], bias = [0.5, -1].
  const std::vector<float> w = {1, 2, 3, -1, 0, 0.5f};
  const std::vector<float> x = {1, 1, 1, 2, -1, 4};
  const float bias[] = {0.5f, -1.0f};
  for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {  // all exact in 16 bits
    auto m = store_matrix(w, 2, 3, type);
    float out[4];
    linear_forward_ref(out, 2, x.data(), 3, m.view, bias, 2);
    EXPECT_EQ(out[0], 6.5f) << type_name(type);   // 1 + 2 + 3 + 0.5
    EXPECT_EQ(out[1], -1.5f) << type_name(type);  // -1 + 0 + 0.5 - 1
    EXPECT_EQ(out[2], 12.5f) << type_name(type);  // 2 - 2 + 12 + 0.5
    EXPECT_EQ(out[3], -1.0f) << type_name(type);  // -2 + 0 + 2 - 1
  }
}

// Callers of the F32 path pass no scratch (linear_scratch_floats is 0 there); a BF16 caller that passes none
// still gets the right product (the few-token kernel then reorders into a per-thread buffer).
TEST(LinearForward, FewTokensWithoutScratch) {
  const int rows = 37, cols = 70;
  const auto w_values = random_floats(static_cast<size_t>(rows) * cols, 3);
  for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
    auto m = store_matrix(w_values, rows, cols, type);
    for (int n_tok : {1, 3, 5, 7}) {
      if (type != WeightType::BF16) {
        EXPECT_EQ(linear_scratch_floats(m.view, n_tok, 1), 0) << type_name(type);
      }
      const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 19 + n_tok);
      std::vector<float> out(static_cast<size_t>(n_tok) * rows), ref(out.size());
      linear_forward(out.data(), rows, x.data(), cols, m.view, nullptr, n_tok, nullptr, 1);
      linear_forward_ref(ref.data(), rows, x.data(), cols, m.view, nullptr, n_tok);
      // fp32 accumulation of cols terms of the stored (widened) weights against the double reference.
      const std::vector<float> wf = gpstream::testing::matrix_rows_f32(m.view);
      for (size_t i = 0; i < out.size(); ++i) {
        const size_t t = i / rows, r = i % rows;
        ASSERT_NEAR(out[i], ref[i],
                    gpstream::testing::linear_output_bound(x.data() + t * cols, wf.data() + r * cols, cols, 0,
                                                           ref[i]))
            << type_name(type) << " n_tok " << n_tok << " i " << i;
      }
    }
  }
}

// rows, cols, n_tok, type, threads
using Case = std::tuple<std::pair<int, int>, int, WeightType, int>;

class LinearForward : public ::testing::TestWithParam<Case> {};

TEST_P(LinearForward, MatchesReference) {
  const auto [shape, n_tok, type, threads] = GetParam();
  const auto [rows, cols] = shape;
  const int64_t ldx = cols + 3, ldo = rows + 5;  // padded strides
  const auto w_values = random_floats(static_cast<size_t>(rows) * cols, 11 + rows + cols);
  auto m = store_matrix(w_values, rows, cols, type);
  auto x = random_floats(static_cast<size_t>(n_tok) * ldx, 7 + n_tok);
  const auto bias = random_floats(rows, 5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> wf = gpstream::testing::matrix_rows_f32(m.view);
  for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
    std::vector<float> out(static_cast<size_t>(n_tok) * ldo, nan), ref(out.size(), nan);
    std::vector<float> scratch(
        static_cast<size_t>(std::max<int64_t>(1, linear_scratch_floats(m.view, n_tok, threads))), nan);
    linear_forward(out.data(), ldo, x.data(), ldx, m.view, b, n_tok, scratch.data(), threads);
    linear_forward_ref(ref.data(), ldo, x.data(), ldx, m.view, b, n_tok);
    for (int t = 0; t < n_tok; ++t) {
      for (int r = 0; r < ldo; ++r) {
        const float got = out[static_cast<size_t>(t) * ldo + r];
        if (r >= rows) {  // padding of the output rows
          ASSERT_TRUE(std::isnan(got)) << "wrote past the row at t=" << t << " r=" << r;
          continue;
        }
        // fp32 accumulation of cols terms (and the bias) of the stored (widened) weights vs the double
        // reference: γ_{cols+1} Σ|x w| (Higham (3.5)) plus the reference's rounding to fp32.
        const double want = ref[static_cast<size_t>(t) * ldo + r];
        const double tol = gpstream::testing::linear_output_bound(x.data() + static_cast<size_t>(t) * ldx,
                                                                  wf.data() + static_cast<size_t>(r) * cols,
                                                                  cols, b ? b[r] : 0.0, want);
        ASSERT_NEAR(got, want, tol) << type_name(type) << " rows " << rows << " cols " << cols << " n_tok "
                                    << n_tok << " threads " << threads << " bias " << (b != nullptr)
                                    << " at t=" << t << " r=" << r;
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [shape, n_tok, type, threads] = info.param;
  return std::string(type_name(type)) + "_" + std::to_string(shape.first) + "x" +
         std::to_string(shape.second) + "_tok" + std::to_string(n_tok) + "_t" + std::to_string(threads);
}

// Rows and columns avoid multiples of 8/16/64 (tails of every vector loop and of the 64-row tiles);
// 130 rows = two full tiles plus 2; n_tok straddles the small-batch thresholds (7 for F32, 11 otherwise)
// and covers the few-token kernel's groups of four with every remainder.
INSTANTIATE_TEST_SUITE_P(
    OddShapes, LinearForward,
    ::testing::Combine(::testing::Values(std::make_pair(1, 1), std::make_pair(7, 13), std::make_pair(67, 33),
                                         std::make_pair(130, 101), std::make_pair(5, 259)),
                       ::testing::Values(1, 2, 3, 6, 7, 11, 12, 33, 130),
                       ::testing::Values(WeightType::F32, WeightType::F16, WeightType::BF16),
                       ::testing::Values(1, 2)),
    case_name);

// Large enough (rows·cols·n_tok ≥ 2^18) for the kernel to really split rows or tiles over two threads,
// on both sides of the small-batch threshold.
INSTANTIATE_TEST_SUITE_P(
    Threaded, LinearForward,
    ::testing::Combine(::testing::Values(std::make_pair(611, 449)), ::testing::Values(1, 3, 7, 8, 9, 11, 12),
                       ::testing::Values(WeightType::F32, WeightType::F16, WeightType::BF16),
                       ::testing::Values(1, 2)),
    case_name);

TEST(LinearForward, NoTokensWritesNothing) {
  auto m = store_matrix(random_floats(12, 1), 3, 4, WeightType::BF16);
  float out[3] = {1, 2, 3};
  const float x[4] = {};
  linear_forward(out, 3, x, 4, m.view, nullptr, 0, nullptr, 2);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[2], 3.0f);
}

}  // namespace
}  // namespace gpstream::kernels
