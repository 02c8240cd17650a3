// Q8_0 / Q4_0 rows interleaved in groups of eight (kernels/quant_dot.h, RowLayout::Interleaved8): the
// layout byte by byte as the header documents it, which matrices qualify, and the interleaved kernels (4-,
// 3-, 2- and 1-token tiles, every group, one and two threads, alone and in a fused share) against the scalar
// reference of the same rows in the plain layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"
#include "kernels/linear.h"
#include "kernels/linear_fused.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_dot.h"
#include "util/half.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::StoredMatrix;

// w's rows interleaved into fresh bytes, and a view of them.
StoredMatrix interleaved(const StoredMatrix& m) {
  StoredMatrix out;
  out.bytes.resize(m.bytes.size());
  interleave_quantized_rows(m.view, out.bytes.data());
  out.view = m.view;
  out.view.data = out.bytes.data();
  out.view.layout = RowLayout::Interleaved8;
  return out;
}

TEST(InterleavedQuant, LayoutAsDocumented) {
  // 16 rows x 64 columns (two groups, two blocks) of distinct bytes; the format's meaning is irrelevant here.
  for (WeightType type : {WeightType::Q4_0, WeightType::Q8_0}) {
    constexpr int kRows = 16, kCols = 64, kBlocks = 2;
    const size_t bb = type == WeightType::Q4_0 ? kQ4_0Bytes : kQ8_0Bytes;
    StoredMatrix m;
    m.bytes.resize(kRows * kBlocks * bb);
    for (size_t i = 0; i < m.bytes.size(); ++i) m.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    m.view = MatrixView{type, kRows, kCols, m.bytes.data()};
    const StoredMatrix x = interleaved(m);
    const size_t ws = kBlocks * bb;
    for (int row = 0; row < kRows; ++row)
      for (int b = 0; b < kBlocks; ++b) {
        const uint8_t* src = m.bytes.data() + row * ws + b * bb;
        // Group g = row / 8 starts where its first row did; block b of the group at 8 * bb * b.
        const uint8_t* blk = x.bytes.data() + (row / 8) * 8 * ws + b * 8 * bb;
        const int r = row % 8;
        EXPECT_EQ(blk[2 * r], src[0]) << row << " " << b;
        EXPECT_EQ(blk[2 * r + 1], src[1]) << row << " " << b;
        for (int j = 0; j < static_cast<int>(bb) - 2; ++j)
          EXPECT_EQ(blk[16 + 32 * (j / 4) + 4 * r + j % 4], src[2 + j]) << row << " " << b << " " << j;
      }
  }
}

TEST(InterleavedQuant, WhichMatricesQualify) {
  uint8_t byte = 0;
  EXPECT_TRUE(can_interleave_rows(MatrixView{WeightType::Q4_0, 8, 32, &byte}));
  EXPECT_TRUE(can_interleave_rows(MatrixView{WeightType::Q4_0, 896, 4864, &byte}));
  EXPECT_FALSE(can_interleave_rows(MatrixView{WeightType::Q4_0, 12, 32, &byte}));  // not whole groups
  EXPECT_TRUE(can_interleave_rows(MatrixView{WeightType::Q8_0, 8, 32, &byte}));
  EXPECT_FALSE(can_interleave_rows(MatrixView{WeightType::Q8_0, 20, 32, &byte}));
  EXPECT_FALSE(can_interleave_rows(MatrixView{WeightType::BF16, 8, 32, &byte}));
  EXPECT_FALSE(can_interleave_rows(MatrixView{WeightType::F32, 8, 32, &byte}));
  EXPECT_FALSE(
      can_interleave_rows(MatrixView{WeightType::Q4_0, 8, 32, &byte, RowLayout::Interleaved8}));  // already
}

// rows, cols, n_tok, threads, type
using Case = std::tuple<int, int, int, int, WeightType>;
class InterleavedKernel : public ::testing::TestWithParam<Case> {};

// The scalar reference on the plain rows: exact int32 per block, fp32 accumulation.
float reference(const StoredMatrix& plain, int r, const std::vector<BlockQ8_0>& xq, int t, int64_t nb) {
  return quant_dot_ref(plain.view.row(r), plain.view.type, xq.data() + t * nb, nb);
}

TEST_P(InterleavedKernel, MatchesScalarReferenceOfPlainRows) {
  const auto [rows, cols, n_tok, threads, type] = GetParam();
  const int64_t ldx = cols + 3, ldo = rows + 5;
  const StoredMatrix plain =
      store_matrix(random_floats(static_cast<size_t>(rows) * cols, 7 + rows + cols), rows, cols, type);
  const StoredMatrix x8 = interleaved(plain);
  const auto x = random_floats(static_cast<size_t>(n_tok) * ldx, 50 + n_tok, -3.0f, 3.0f);
  const auto bias = random_floats(rows, 3);
  std::vector<float> out(static_cast<size_t>(n_tok) * ldo, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> scratch(static_cast<size_t>(linear_scratch_floats(x8.view, n_tok, threads)));
  linear_forward(out.data(), ldo, x.data(), ldx, x8.view, bias.data(), n_tok, scratch.data(), threads);
  const int64_t nb = cols / 32;
  std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * nb));
  quantize_activations_q8_0(x.data(), ldx, n_tok, cols, xq.data());
  for (int t = 0; t < n_tok; ++t)
    for (int r = 0; r < ldo; ++r) {
      const float got = out[static_cast<size_t>(t) * ldo + r];
      if (r >= rows) {
        ASSERT_TRUE(std::isnan(got)) << "padding written at t=" << t << " r=" << r;
        continue;
      }
      const float want = reference(plain, r, xq, t, nb) + bias[r];
      const double mag = gpstream::testing::quantized_dot_magnitude(plain.view.row(r), plain.view.type,
                                                                    xq.data() + t * nb, nb);
      ASSERT_NEAR(got, want, gpstream::testing::quantized_linear_bound(mag + std::fabs(bias[r]), nb, want))
          << "t=" << t << " r=" << r;
    }
}

// Two interleaved matrices and a plain (Q8_0, 12 rows: not interleavable) one computed as one fused share:
// every row once, whichever thread's share (multiples of eight rows) it falls in.
TEST_P(InterleavedKernel, FusedShareMatchesReference) {
  const auto [rows, cols, n_tok, threads, type] = GetParam();
  const StoredMatrix a = store_matrix(random_floats(static_cast<size_t>(rows) * cols, 1), rows, cols, type);
  const StoredMatrix b =
      store_matrix(random_floats(static_cast<size_t>(16) * cols, 2), 16, cols, WeightType::Q4_0);
  const StoredMatrix c =
      store_matrix(random_floats(static_cast<size_t>(12) * cols, 3), 12, cols, WeightType::Q8_0);
  const StoredMatrix a8 = interleaved(a), b8 = interleaved(b);
  const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 4, -2.0f, 2.0f);
  std::vector<float> oa(static_cast<size_t>(n_tok) * rows), ob(static_cast<size_t>(n_tok) * 16),
      oc(static_cast<size_t>(n_tok) * 12);
  const LinearOutput outs[] = {{oa.data(), rows, a8.view, nullptr},
                               {ob.data(), 16, b8.view, nullptr},
                               {oc.data(), 12, c.view, nullptr}};
  ASSERT_TRUE(linear_share_applies(outs, n_tok));
  std::vector<float> scratch(static_cast<size_t>(linear_fused_scratch_floats(outs, n_tok, threads)));
  linear_forward_fused(outs, x.data(), cols, n_tok, scratch.data(), threads);
  const int64_t nb = cols / 32;
  std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * nb));
  quantize_activations_q8_0(x.data(), cols, n_tok, cols, xq.data());
  const std::tuple<const StoredMatrix*, const std::vector<float>*, int, WeightType> parts[] = {
      {&a, &oa, rows, type}, {&b, &ob, 16, WeightType::Q4_0}, {&c, &oc, 12, WeightType::Q8_0}};
  for (const auto& [m, o, n_rows, type] : parts)
    for (int t = 0; t < n_tok; ++t)
      for (int r = 0; r < n_rows; ++r) {
        const float want = quant_dot_ref(m->view.row(r), type, xq.data() + t * nb, nb);
        const double mag =
            gpstream::testing::quantized_dot_magnitude(m->view.row(r), type, xq.data() + t * nb, nb);
        ASSERT_NEAR((*o)[static_cast<size_t>(t) * n_rows + r], want,
                    gpstream::testing::quantized_linear_bound(mag, nb, want))
            << "rows=" << n_rows << " t=" << t << " r=" << r;
      }
}

// Q8_0 weights at the ends of int8 (-128, as a file may hold though llama.cpp's quantizer never writes it,
// and 127) against activations of ±127 (scale 1: x quantizes to itself), every scale 1: each block's dot
// product is an integer the floats hold exactly, so the kernel must give the int64 sum computed here for
// every tile width — int16 sums that overflowed or saturated would not.
TEST(InterleavedQuant, Q8_0ExtremesAreExact) {
  const int64_t rows = 16, cols = 128, nb = cols / 32;
  std::mt19937 rng(3);
  std::vector<int8_t> w(static_cast<size_t>(rows * cols));
  const int8_t ends[] = {-128, -127, 127, 126, 0};
  for (auto& v : w)
    v = rng() % 2 ? ends[rng() % 5] : static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (int64_t j = 0; j < cols; ++j) w[static_cast<size_t>(j)] = 127, w[static_cast<size_t>(cols + j)] = -128;
  StoredMatrix plain;
  plain.bytes.resize(static_cast<size_t>(rows * nb) * kQ8_0Bytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      auto* blk = reinterpret_cast<BlockQ8_0*>(plain.bytes.data()) + r * nb + b;
      blk->d = f32_to_f16(1.0f);
      std::memcpy(blk->qs, w.data() + r * cols + b * 32, 32);
    }
  plain.view.data = plain.bytes.data();
  plain.view.type = WeightType::Q8_0;
  plain.view.rows = rows;
  plain.view.cols = cols;
  const StoredMatrix x8 = interleaved(plain);
  for (int n_tok : {1, 2, 3, 4, 5, 9}) {
    std::vector<float> x(static_cast<size_t>(n_tok * cols));
    for (int64_t i = 0; i < n_tok * cols; ++i) x[static_cast<size_t>(i)] = rng() % 2 ? 127.0f : -127.0f;
    if (n_tok > 1)
      std::fill(x.begin() + cols, x.begin() + 2 * cols, 127.0f);  // with row 0: 32 * 127 * 127 a block
    std::vector<float> out(static_cast<size_t>(n_tok * rows));
    std::vector<float> scratch(static_cast<size_t>(linear_scratch_floats(x8.view, n_tok, 1)));
    linear_forward(out.data(), rows, x.data(), cols, x8.view, nullptr, n_tok, scratch.data(), 1);
    for (int t = 0; t < n_tok; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        int64_t want = 0;
        for (int64_t j = 0; j < cols; ++j)
          want += int64_t{w[static_cast<size_t>(r * cols + j)]} *
                  static_cast<int64_t>(x[static_cast<size_t>(t * cols + j)]);
        ASSERT_EQ(out[static_cast<size_t>(t * rows + r)], static_cast<float>(want))
            << "n_tok=" << n_tok << " t=" << t << " r=" << r;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, InterleavedKernel,
                         ::testing::Combine(::testing::Values(8, 40, 136), ::testing::Values(32, 96, 320),
                                            ::testing::Values(1, 2, 3, 4, 7, 50), ::testing::Values(1, 2),
                                            ::testing::Values(WeightType::Q4_0, WeightType::Q8_0)));
// Large enough for the parallel regime (rows * cols * n_tok >= 2^18).
INSTANTIATE_TEST_SUITE_P(Parallel, InterleavedKernel,
                         ::testing::Combine(::testing::Values(264), ::testing::Values(1024),
                                            ::testing::Values(1, 5), ::testing::Values(2),
                                            ::testing::Values(WeightType::Q4_0, WeightType::Q8_0)));

}  // namespace
}  // namespace gpstream::kernels
