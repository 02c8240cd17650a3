// GGUF block formats and the int8 kernels: Q8_0 / Q4_0 blocks worked out by hand; quantize / dequantize
// against llama.cpp's gguf-py (tests/kernels/data/quant_blocks.json, scripts/make-quant-fixtures);
// round-trip error within the bound each format implies; the AVX2 micro-kernels against the scalar
// reference; and the quantized linear layer against the fp32 product of the unquantized data, within a
// bound derived from the block scales (below).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"
#include "kernels/convert.h"
#include "kernels/linear.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_dot.h"
#include "util/half.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::type_name;

std::vector<uint8_t> hex_bytes(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

TEST(QuantBlocks, Q8_0HandBlock) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);  // max |x| = 16: d = 16/127
  BlockQ8_0 b;
  quantize_row_q8_0(x, &b, 32);
  EXPECT_EQ(b.d, f32_to_f16(16.0f / 127.0f));
  EXPECT_EQ(b.qs[0], -127);  // -16 * 127/16
  EXPECT_EQ(b.qs[16], 0);
  EXPECT_EQ(b.qs[17], 8);    // 1 * 7.9375 = 7.94
  EXPECT_EQ(b.qs[31], 119);  // 15 * 7.9375 = 119.06
  EXPECT_EQ(b.qs[13], -24);  // -3 * 7.9375 = -23.81
  float y[32];
  dequantize_row_q8_0(&b, y, 32);
  EXPECT_EQ(y[0], f16_to_f32(b.d) * -127.0f);
}

TEST(QuantBlocks, Q4_0HandBlock) {
  float x[32];
  for (int j = 0; j < 32; ++j)
    x[j] = static_cast<float>(j - 16);  // largest magnitude: -16, so d = -16/-8 = 2
  BlockQ4_0 b;
  quantize_row_q4_0(x, &b, 32);
  EXPECT_EQ(b.d, 0x4000);  // 2.0 in fp16
  // nibble = min(15, trunc(x/2 + 8.5)); byte j = nibble(j) | nibble(j + 16) << 4.
  EXPECT_EQ(b.qs[0], 0x80);   // x=-16 -> 0, x=0 -> 8
  EXPECT_EQ(b.qs[15], 0xF8);  // x=-1 -> 8, x=15 -> trunc(16) capped at 15
  EXPECT_EQ(b.qs[1], 0x91);   // x=-15 -> trunc(-7.5 + 8.5) = 1, x=1 -> trunc(0.5 + 8.5) = 9
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  EXPECT_EQ(y[0], -16.0f);  // (0 - 8) * 2
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[31], 14.0f);  // (15 - 8) * 2: the cap costs |d| / 2 here
}

TEST(QuantBlocks, MatchGgufPy) {
  std::ifstream in(std::string(GPSTREAM_SOURCE_DIR) + "/tests/kernels/data/quant_blocks.json");
  ASSERT_TRUE(in) << "missing fixture (scripts/make-quant-fixtures)";
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  int checked = 0;
  for (const auto& c : j["quantize"]) {
    const std::string type = c["type"];
    const auto x = c["x"].get<std::vector<float>>();
    const auto want = hex_bytes(c["bytes"]);
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> got(type == "Q8_0" ? row_bytes(WeightType::Q8_0, n)
                                            : row_bytes(WeightType::Q4_0, n));
    if (type == "Q8_0") {
      quantize_row_q8_0(x.data(), reinterpret_cast<BlockQ8_0*>(got.data()), n);
    } else {
      quantize_row_q4_0(x.data(), reinterpret_cast<BlockQ4_0*>(got.data()), n);
    }
    EXPECT_EQ(got, want) << type;
    ++checked;
  }
  for (const auto& c : j["dequantize"]) {
    const std::string type = c["type"];
    const auto bytes = hex_bytes(c["bytes"]);
    const auto want = c["values"].get<std::vector<float>>();
    std::vector<float> got(want.size());
    if (type == "Q4_K") {
      dequantize_row_q4_k(bytes.data(), got.data(), static_cast<int64_t>(got.size()));
    } else {
      dequantize_row_q6_k(bytes.data(), got.data(), static_cast<int64_t>(got.size()));
    }
    // Q4_K: (fp16 d · 6-bit scale) · 4-bit quant − fp16 dmin · 6-bit min: products of at most 11 + 6 + 4 and
    // 11 + 6 significant bits, exact in fp32; the subtraction rounds once. Q6_K: fp16 d · int8 scale · quant
    // in [−32, 31]: at most 11 + 7 + 6 = 24 bits, exact. So each side (gguf-py's float32 numpy, this kernel,
    // fused or not) is within u·|exact|: 2u/(1 − u)·|want| between them.
    const double two_roundings = 2 * gpstream::testing::kUnitF32 / (1 - gpstream::testing::kUnitF32);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], two_roundings * std::fabs(want[i])) << type << " element " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// Per-element bounds of the formats. Q8_0: q = round(x / d) with d = max|x| / 127 is within d/2 of x / d,
// and storing d in fp16 (d16) moves each value by |q| |d - d16| <= 127 |d - d16|. Q4_0: d = m / -8; the
// truncation of x/d + 8.5 is round-half-up, within |d|/2, except x = -m (x/d = 8 -> nibble 16, capped at 15),
// off by |d|; |nibble - 8| <= 8 so fp16 costs 8 |d - d16|. fp32 rounds amax/127 (u, ≤ 127u·d = u·amax in
// the value), x/d (2u·|x/d|·d ≤ 2u·amax) and the product q·d16 (u·amax): 4u·amax.
struct BlockBound {
  static constexpr float kUnit = static_cast<float>(gpstream::testing::kUnitF32);
  float q8(const float* x) const {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    return d / 2 + 127 * std::fabs(d - f16_to_f32(f32_to_f16(d))) + 4 * kUnit * amax;
  }
  float q4(const float* x) const {
    float amax = 0, m = 0;
    for (int j = 0; j < 32; ++j)
      if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), m = x[j];
    const float d = std::fabs(m / 8.0f);
    return d + 8 * std::fabs(d - std::fabs(f16_to_f32(f32_to_f16(m / -8.0f)))) + 4 * kUnit * amax;
  }
};

TEST(QuantBlocks, RoundTripWithinFormatBound) {
  for (float scale : {1e-3f, 1.0f, 40.0f}) {
    const auto x = random_floats(32 * 64, 3, -scale, scale);
    std::vector<BlockQ8_0> b8(64);
    std::vector<BlockQ4_0> b4(64);
    quantize_row_q8_0(x.data(), b8.data(), 32 * 64);
    quantize_row_q4_0(x.data(), b4.data(), 32 * 64);
    std::vector<float> y8(x.size()), y4(x.size());
    dequantize_row_q8_0(b8.data(), y8.data(), 32 * 64);
    dequantize_row_q4_0(b4.data(), y4.data(), 32 * 64);
    double worst8 = 0, worst4 = 0;
    for (int b = 0; b < 64; ++b) {
      const float e8 = BlockBound{}.q8(&x[b * 32]), e4 = BlockBound{}.q4(&x[b * 32]);
      for (int j = 0; j < 32; ++j) {
        const size_t i = static_cast<size_t>(b * 32 + j);
        ASSERT_LE(std::fabs(x[i] - y8[i]), e8) << "Q8_0 scale " << scale << " element " << i;
        ASSERT_LE(std::fabs(x[i] - y4[i]), e4) << "Q4_0 scale " << scale << " element " << i;
        worst8 = std::max(worst8, double{std::fabs(x[i] - y8[i]) / e8});
        worst4 = std::max(worst4, double{std::fabs(x[i] - y4[i]) / e4});
      }
    }
    EXPECT_GT(worst8, 0.5) << "the Q8_0 bound is far from tight: is the data quantized at all?";
    EXPECT_GT(worst4, 0.3);
  }
}

TEST(QuantBlocks, ConvertRowDequantizes) {
  const auto x = random_floats(96, 4);
  for (WeightType type : {WeightType::Q8_0, WeightType::Q4_0}) {
    auto m = store_matrix(x, 1, 96, type);
    std::vector<float> a(96), b(96);
    convert_row(a.data(), m.view.row(0), type, 96);
    if (type == WeightType::Q8_0)
      dequantize_row_q8_0(m.view.row(0), b.data(), 96);
    else
      dequantize_row_q4_0(m.view.row(0), b.data(), 96);
    EXPECT_EQ(a, b) << type_name(type);
    convert_row_ref(a.data(), m.view.row(0), type, 96);
    EXPECT_EQ(a, b) << type_name(type);
    double want = 0;
    for (int i = 0; i < 96; ++i) want += double{x[i]} * b[i];
    // fp32 sums of 96 products of x and the dequantized row against the double dot: γ_96 Σ|x ŵ| (the
    // reference's rounding to fp32 included: u|want|).
    const double tol = gpstream::testing::linear_output_bound(x.data(), b.data(), 96, 0, want);
    EXPECT_NEAR(dot_row(x.data(), m.view.row(0), type, 96), want, tol) << type_name(type);
    EXPECT_NEAR(dot_row_ref(x.data(), m.view.row(0), type, 96), want, tol) << type_name(type);
  }
}

// rows, cols, n_tok, type, threads
using Case = std::tuple<int, int, int, WeightType, int>;

class QuantLinear : public ::testing::TestWithParam<Case> {};

// The AVX2 micro-kernels (4x2, 4x1 and 1x1 tiles, row tails, two threads) give the scalar reference's
// dot products up to fp32 summation order.
TEST_P(QuantLinear, KernelMatchesScalarReference) {
  const auto [rows, cols, n_tok, type, threads] = GetParam();
  const int64_t ldx = cols + 5, ldo = rows + 3;
  const auto wv = random_floats(static_cast<size_t>(rows) * cols, 100 + rows + cols);
  auto m = store_matrix(wv, rows, cols, type);
  const auto x = random_floats(static_cast<size_t>(n_tok) * ldx, 200 + n_tok, -3.0f, 3.0f);
  const auto bias = random_floats(rows, 9);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> out(static_cast<size_t>(n_tok) * ldo, nan);
  std::vector<float> scratch(static_cast<size_t>(linear_scratch_floats(m.view, n_tok, threads)));
  linear_forward(out.data(), ldo, x.data(), ldx, m.view, bias.data(), n_tok, scratch.data(), threads);
  const int64_t nb = cols / 32;
  std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * nb));
  quantize_activations_q8_0(x.data(), ldx, n_tok, cols, xq.data());
  for (int t = 0; t < n_tok; ++t) {
    for (int r = 0; r < ldo; ++r) {
      const float got = out[static_cast<size_t>(t) * ldo + r];
      if (r >= rows) {
        ASSERT_TRUE(std::isnan(got)) << "padding written at t=" << t << " r=" << r;
        continue;
      }
      const float want = quant_dot_ref(m.view.row(r), type, xq.data() + t * nb, nb) + bias[r];
      const double mag =
          gpstream::testing::quantized_dot_magnitude(m.view.row(r), type, xq.data() + t * nb, nb);
      ASSERT_NEAR(got, want, gpstream::testing::quantized_linear_bound(mag + std::fabs(bias[r]), nb, want))
          << type_name(type) << " t=" << t << " r=" << r;
    }
  }
}

// Against the exact product of the unquantized data: |sum w x - sum ŵ x̂| <= sum |x| |w - ŵ| + sum |ŵ| |x -
// x̂|, with |w - ŵ| bounded per block as above and |x - x̂| by the Q8_0 activation bound (d/2 with d =
// max|x|/127, the same fp16 term; round-half-even does not change it). Plus fp32 accumulation of the nb block
// terms (two products each): γ_{nb+2} Σ|ŵ x̂| ≤ γ_{nb+2} Σ|ŵ|(|x| + e_x).
TEST_P(QuantLinear, WithinFormatBoundOfFp32Product) {
  const auto [rows, cols, n_tok, type, threads] = GetParam();
  const auto wv = random_floats(static_cast<size_t>(rows) * cols, 300 + rows + cols);
  auto m = store_matrix(wv, rows, cols, type);
  const auto x = random_floats(static_cast<size_t>(n_tok) * cols, 400 + n_tok, -2.0f, 2.0f);
  std::vector<float> out(static_cast<size_t>(n_tok) * rows);
  std::vector<float> scratch(static_cast<size_t>(linear_scratch_floats(m.view, n_tok, threads)));
  linear_forward(out.data(), rows, x.data(), cols, m.view, nullptr, n_tok, scratch.data(), threads);
  std::vector<float> w_hat(static_cast<size_t>(cols));
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    convert_row(w_hat.data(), m.view.row(r), type, cols);
    for (int t = 0; t < n_tok; ++t) {
      double exact = 0, bound = 0, mag = 0;
      for (int b = 0; b < cols / 32; ++b) {
        const float* wb = &wv[static_cast<size_t>(r) * cols + b * 32];
        const float* xb = &x[static_cast<size_t>(t) * cols + b * 32];
        const double ew = type == WeightType::Q8_0 ? BlockBound{}.q8(wb) : BlockBound{}.q4(wb);
        const double ex = BlockBound{}.q8(xb);
        for (int j = 0; j < 32; ++j) {
          exact += double{wb[j]} * xb[j];
          bound += std::fabs(xb[j]) * ew + std::fabs(w_hat[b * 32 + j]) * ex;
          mag += std::fabs(w_hat[b * 32 + j]) * (std::fabs(xb[j]) + ex);
        }
      }
      bound += gpstream::testing::gamma_n(cols / 32 + 2) * mag;
      const double err = std::fabs(out[static_cast<size_t>(t) * rows + r] - exact);
      ASSERT_LE(err, bound) << type_name(type) << " t=" << t << " r=" << r;
      worst = std::max(worst, err / bound);
    }
  }
  EXPECT_GT(worst, 1e-3) << "errors implausibly small: is the quantized path running?";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QuantLinear,
    ::testing::Combine(::testing::Values(1, 5, 36, 67), ::testing::Values(32, 96, 320),
                       ::testing::Values(1, 2, 3, 9, 17, 50),  // 50: past one 48-token block
                       ::testing::Values(WeightType::Q8_0, WeightType::Q4_0), ::testing::Values(1, 2)));

// Large enough for the parallel regime (rows * cols * n_tok >= 2^18) with two threads.
INSTANTIATE_TEST_SUITE_P(Parallel, QuantLinear,
                         ::testing::Combine(::testing::Values(130), ::testing::Values(1024),
                                            ::testing::Values(1, 4),
                                            ::testing::Values(WeightType::Q8_0, WeightType::Q4_0),
                                            ::testing::Values(2)));

}  // namespace
}  // namespace gpstream::kernels
