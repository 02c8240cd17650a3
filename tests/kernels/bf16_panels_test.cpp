// BF16 rows in panels of sixteen (kernels/bf16_panels.h, RowLayout::Paneled16): the layout value by
// value as the header documents it, which matrices qualify, the micro-kernel (1- to 6-token tiles and their
// tails, every panel, one and two threads, alone and in a fused share with plain matrices) against a
// double-precision dot product of the plain rows, and the property the scheduler relies on: a token's
// outputs are the same bits whatever it is batched with. On a CPU with AVX-512 the tests run its twin
// (bf16_panels_avx512.h), and one more compares the two kernels bit for bit.
#include "kernels/bf16_panels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"
#include "kernels/cpu_isa.h"
#include "kernels/linear.h"
#include "kernels/linear_fused.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::StoredMatrix;

StoredMatrix paneled(const StoredMatrix& m) {
  StoredMatrix out;
  out.bytes.resize(m.bytes.size());
  panel_bf16_rows(m.view, out.bytes.data());
  out.view = m.view;
  out.view.data = out.bytes.data();
  out.view.layout = RowLayout::Paneled16;
  return out;
}

// Row r · x in double from the plain BF16 bytes, plus the bias.
double plain_dot(const StoredMatrix& plain, int64_t r, const float* x, float bias) {
  const auto* row = static_cast<const uint16_t*>(plain.view.row(r));
  double s = bias;
  for (int64_t k = 0; k < plain.view.cols; ++k) s += static_cast<double>(bf16_to_f32(row[k])) * x[k];
  return s;
}

TEST(Bf16Panels, LayoutAsDocumented) {
  // 32 rows (two panels) x 5 columns of distinct 16-bit values.
  constexpr int kRows = 32, kCols = 5;
  StoredMatrix m;
  m.bytes.resize(kRows * kCols * 2);
  for (int i = 0; i < kRows * kCols; ++i) {
    const auto v = static_cast<uint16_t>(i * 7 + 3);
    std::memcpy(m.bytes.data() + 2 * i, &v, 2);
  }
  m.view = MatrixView{WeightType::BF16, kRows, kCols, m.bytes.data()};
  const StoredMatrix p = paneled(m);
  // The header's order of a column's sixteen values: rows 0-3, 8-11, 4-7, 12-15.
  const int order[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
  for (int g = 0; g < kRows / 16; ++g)
    for (int k = 0; k < kCols; ++k)
      for (int j = 0; j < 16; ++j) {
        uint16_t got, want;
        std::memcpy(&got, p.bytes.data() + 2 * (g * 16 * kCols + 16 * k + j), 2);
        std::memcpy(&want, m.bytes.data() + 2 * ((g * 16 + order[j]) * kCols + k), 2);
        ASSERT_EQ(got, want) << "panel " << g << " column " << k << " slot " << j;
      }
  // Reading a row back gives the row.
  std::vector<float> row(kCols);
  for (int r = 0; r < kRows; ++r) {
    panel_bf16_read_row(row.data(), p.view, r);
    for (int k = 0; k < kCols; ++k) {
      uint16_t h;
      std::memcpy(&h, m.bytes.data() + 2 * (r * kCols + k), 2);
      ASSERT_EQ(row[k], bf16_to_f32(h)) << "row " << r << " column " << k;
    }
  }
}

TEST(Bf16Panels, WhichMatricesQualify) {
  uint8_t byte = 0;
  EXPECT_TRUE(can_panel_bf16(MatrixView{WeightType::BF16, 16, 1, &byte}));
  EXPECT_TRUE(can_panel_bf16(MatrixView{WeightType::BF16, 151936, 896, &byte}));
  EXPECT_FALSE(can_panel_bf16(MatrixView{WeightType::BF16, 24, 32, &byte}));  // not whole panels
  EXPECT_FALSE(can_panel_bf16(MatrixView{WeightType::F16, 16, 32, &byte}));
  EXPECT_FALSE(can_panel_bf16(MatrixView{WeightType::F32, 16, 32, &byte}));
  EXPECT_FALSE(can_panel_bf16(MatrixView{WeightType::Q8_0, 16, 32, &byte}));
  EXPECT_FALSE(can_panel_bf16(MatrixView{WeightType::BF16, 16, 32, &byte, RowLayout::Paneled16}));  // already
}

// rows, cols, n_tok, threads
using Case = std::tuple<int, int, int, int>;
class PanelKernel : public ::testing::TestWithParam<Case> {};

TEST_P(PanelKernel, MatchesDoubleDotOfPlainRows) {
  const auto [rows, cols, n_tok, threads] = GetParam();
  const int64_t ldx = cols + 3, ldo = rows + 5;
  const StoredMatrix plain = store_matrix(random_floats(static_cast<size_t>(rows) * cols, 7 + rows + cols),
                                          rows, cols, WeightType::BF16);
  const StoredMatrix p = paneled(plain);
  const auto x = random_floats(static_cast<size_t>(n_tok) * ldx, 50 + n_tok, -3.0f, 3.0f);
  const auto bias = random_floats(rows, 3);
  std::vector<float> out(static_cast<size_t>(n_tok) * ldo, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> scratch(
      static_cast<size_t>(std::max<int64_t>(1, linear_scratch_floats(p.view, n_tok, threads))));
  linear_forward(out.data(), ldo, x.data(), ldx, p.view, bias.data(), n_tok, scratch.data(), threads);
  const std::vector<float> wf = gpstream::testing::matrix_rows_f32(plain.view);
  for (int t = 0; t < n_tok; ++t)
    for (int r = 0; r < ldo; ++r) {
      const float got = out[static_cast<size_t>(t) * ldo + r];
      if (r >= rows) {
        ASSERT_TRUE(std::isnan(got)) << "padding written at t=" << t << " r=" << r;
        continue;
      }
      const double want = plain_dot(plain, r, x.data() + t * ldx, bias[r]);
      // fp32 accumulation of cols products and the bias against the double dot: γ_{cols+1}(Σ|x ŵ| + |b|)
      // (Higham (3.5)).
      const double tol =
          gpstream::testing::gamma_n(cols + 1) *
          (gpstream::testing::abs_dot(x.data() + t * ldx, wf.data() + static_cast<size_t>(r) * cols, cols) +
           std::fabs(bias[r]));
      ASSERT_NEAR(got, want, tol) << "t=" << t << " r=" << r;
    }
}

TEST_P(PanelKernel, TokenOutputsDoNotDependOnTheBatch) {
  const auto [rows, cols, n_tok, threads] = GetParam();
  const StoredMatrix p =
      paneled(store_matrix(random_floats(static_cast<size_t>(rows) * cols, 9), rows, cols, WeightType::BF16));
  const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 10, -2.0f, 2.0f);
  std::vector<float> batched(static_cast<size_t>(n_tok) * rows), alone(static_cast<size_t>(rows));
  bf16_panel_matmul(batched.data(), rows, x.data(), cols, p.view, nullptr, 0, rows, n_tok);
  for (int t = 0; t < n_tok; ++t) {
    bf16_panel_matmul(alone.data(), rows, x.data() + t * cols, cols, p.view, nullptr, 0, rows, 1);
    for (int r = 0; r < rows; ++r)
      ASSERT_EQ(batched[static_cast<size_t>(t) * rows + r], alone[r]) << "t=" << t << " r=" << r;
  }
  (void)threads;
}

// The AVX-512 twin against the AVX2 kernel, the same bits: whole calls and calls on a sub-range of panels
// (an odd number of them, so the twin's two-panel tiles leave one), tiles of 1-12 tokens and their splits.
TEST_P(PanelKernel, Avx512TwinEqualsAvx2BitForBit) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F";
  const auto [rows, cols, n_tok, threads] = GetParam();
  const StoredMatrix p = paneled(
      store_matrix(random_floats(static_cast<size_t>(rows) * cols, 21), rows, cols, WeightType::BF16));
  const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 22, -2.0f, 2.0f);
  const auto bias = random_floats(rows, 23);
  const Isa before = kernel_isa();
  auto run = [&](Isa isa, int64_t r0, int64_t nr) {
    EXPECT_TRUE(set_kernel_isa(isa));
    std::vector<float> out(static_cast<size_t>(n_tok) * rows, -1.0f);
    bf16_panel_matmul(out.data(), rows, x.data(), cols, p.view, bias.data(), r0, nr, n_tok);
    return out;
  };
  const int64_t sub_r0 = rows > 16 ? 16 : 0, sub_nr = rows > 16 ? std::min(48, rows - 16) : 16;
  for (const auto& [r0, nr] : {std::pair<int64_t, int64_t>{0, rows}, {sub_r0, sub_nr}}) {
    const auto want = run(Isa::Avx2, r0, nr);
    const auto got = run(Isa::Avx512, r0, nr);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
          << "r0=" << r0 << " nr=" << nr << " t=" << i / rows << " r=" << i % rows << ": " << got[i]
          << " != " << want[i];
  }
  set_kernel_isa(before);
  (void)threads;
}

// A paneled matrix and a plain BF16 one of 24 rows (not paneled) computed together: one fused share while the
// plain one takes the few-token kernel (every row once, whatever the thread split), one linear each beyond.
TEST_P(PanelKernel, FusedShareMatchesReference) {
  const auto [rows, cols, n_tok, threads] = GetParam();
  const StoredMatrix a =
      store_matrix(random_floats(static_cast<size_t>(rows) * cols, 1), rows, cols, WeightType::BF16);
  const StoredMatrix b =
      store_matrix(random_floats(static_cast<size_t>(24) * cols, 2), 24, cols, WeightType::BF16);
  const StoredMatrix pa = paneled(a);
  const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 4, -2.0f, 2.0f);
  std::vector<float> oa(static_cast<size_t>(n_tok) * rows), ob(static_cast<size_t>(n_tok) * 24);
  const LinearOutput outs[] = {{oa.data(), rows, pa.view, nullptr}, {ob.data(), 24, b.view, nullptr}};
  EXPECT_EQ(linear_share_applies(outs, n_tok), linear_takes_few_tokens(WeightType::BF16, n_tok));
  std::vector<float> scratch(static_cast<size_t>(linear_fused_scratch_floats(outs, n_tok, threads)));
  linear_forward_fused(outs, x.data(), cols, n_tok, scratch.data(), threads);
  for (const auto& [m, o, n_rows] : {std::tuple{&a, &oa, rows}, std::tuple{&b, &ob, 24}}) {
    const std::vector<float> wf = gpstream::testing::matrix_rows_f32(m->view);
    for (int t = 0; t < n_tok; ++t)
      for (int r = 0; r < n_rows; ++r) {
        const double want = plain_dot(*m, r, x.data() + t * cols, 0.0f);
        // fp32 accumulation of cols products against the double dot: γ_cols Σ|x ŵ| (Higham (3.5)).
        const double tol = gpstream::testing::dot_error_bound(
            x.data() + t * cols, wf.data() + static_cast<size_t>(r) * cols, cols);
        ASSERT_NEAR((*o)[static_cast<size_t>(t) * n_rows + r], want, tol)
            << "rows=" << n_rows << " t=" << t << " r=" << r;
      }
  }
}

// Every tile width (6; the AVX-512 twin's 12) and tail, several panels, columns odd and even.
INSTANTIATE_TEST_SUITE_P(Shapes, PanelKernel,
                         ::testing::Combine(::testing::Values(16, 48, 160), ::testing::Values(1, 7, 64),
                                            ::testing::Values(1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 23, 25),
                                            ::testing::Values(1, 2)));
// Large enough for the parallel regime (rows * cols * n_tok >= 2^18), with prefetching tiles.
INSTANTIATE_TEST_SUITE_P(Parallel, PanelKernel,
                         ::testing::Combine(::testing::Values(272), ::testing::Values(1000),
                                            ::testing::Values(1, 9), ::testing::Values(2)));

}  // namespace
}  // namespace gpstream::kernels
