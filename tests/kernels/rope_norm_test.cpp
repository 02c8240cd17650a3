// RoPE: hand values of the rotate-half form, the inverse rotation (sign -1) undoing the rotation,
// composition R(a)·R(b) = R(a + b) with real-valued positions, norms preserved, strided rows.
// RMSNorm and the gated activations: values worked out by hand; SiLU against double over its range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"
#include "kernels/activation.h"
#include "kernels/norm.h"
#include "kernels/rope.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;

struct Table {
  std::vector<float> cos, sin;
};

Table table(const std::vector<float>& pos, const std::vector<float>& inv_freq, float scale = 1.0f) {
  Table t{std::vector<float>(pos.size() * inv_freq.size()), std::vector<float>(pos.size() * inv_freq.size())};
  rope_table(t.cos.data(), t.sin.data(), pos.data(), inv_freq.data(), static_cast<int64_t>(pos.size()),
             static_cast<int64_t>(inv_freq.size()), scale);
  return t;
}

std::vector<float> hf_inv_freq(int head_dim, double theta) {
  std::vector<float> f(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) f[i] = static_cast<float>(std::pow(theta, -2.0 * i / head_dim));
  return f;
}

TEST(Rope, HandValuesOfTheRotateHalfForm) {
  // head_dim 4 (pairs (0,2) and (1,3)), inv_freq {1, 0.5}, position 0.5·π: angles π/2 and π/4.
  // out[i] = x[i]cos − x[i+2]sin; out[i+2] = x[i+2]cos + x[i]sin.
  const float pi = static_cast<float>(M_PI);
  Table t = table({pi / 2}, {1.0f, 0.5f});
  float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  rope_apply(x, 4, t.cos.data(), t.sin.data(), 1, 1, 4);
  const double c = std::sqrt(0.5);
  // Against the exact angles: fp32 π/2 is off by ≤ u relative (|Δθ| ≤ u·θ), cos and sin round (u each), and
  // a·c − b·s rounds (γ_2): |err| ≤ (|a| + |b|)(u·θ + γ_3).
  auto tol = [](double a, double b, double theta) {
    return (std::fabs(a) + std::fabs(b)) *
           (gpstream::testing::kUnitF32 * theta + gpstream::testing::gamma_n(3));
  };
  EXPECT_NEAR(x[0], -3.0, tol(1, 3, M_PI / 2));           // 1·0 − 3·1
  EXPECT_NEAR(x[2], 1.0, tol(3, 1, M_PI / 2));            // 3·0 + 1·1
  EXPECT_NEAR(x[1], 2 * c - 4 * c, tol(2, 4, M_PI / 4));  // 2cos − 4sin
  EXPECT_NEAR(x[3], 4 * c + 2 * c, tol(4, 2, M_PI / 4));  // 4cos + 2sin
  // Position 0 is the identity; the table's scale multiplies cos and sin.
  Table z = table({0.0f}, {1.0f, 0.5f}, 2.0f);
  EXPECT_EQ(z.cos[0], 2.0f);
  EXPECT_EQ(z.sin[1], 0.0f);
}

TEST(Rope, InverseRotationUndoesTheRotation) {
  const int n_tok = 5, n_heads = 3, head_dim = 16, ld = n_heads * head_dim + 7;
  const std::vector<float> pos = {0.0f, 0.5f, 3.0f, 17.25f, 1000.5f};
  Table t = table(pos, hf_inv_freq(head_dim, 1e4));
  const auto x0 = random_floats(static_cast<size_t>(n_tok) * ld, 9);
  auto x = x0;
  rope_apply(x.data(), ld, t.cos.data(), t.sin.data(), n_tok, n_heads, head_dim);
  double moved = 0;
  for (size_t i = 0; i < x.size(); ++i) moved = std::max(moved, static_cast<double>(std::fabs(x[i] - x0[i])));
  EXPECT_GT(moved, 0.1);  // it did rotate
  rope_apply(x.data(), ld, t.cos.data(), t.sin.data(), n_tok, n_heads, head_dim, -1.0f);
  // A rotation of a pair v by a table whose cos and sin are within u of exact: a·c − b·s is within
  // u(|a| + |b|) + γ_2(|a c| + |b s|) ≤ γ_3 √2 ‖v‖ per element, 2γ_3‖v‖ as a pair; the exact rotations
  // compose to the identity, so two of them leave ≤ 4γ_3‖v‖ (rotations keep ‖v‖).
  const int half = head_dim / 2;
  auto pair_norm = [&](const std::vector<float>& v, size_t k, int i) {
    const size_t a = k - static_cast<size_t>(i % head_dim) + static_cast<size_t>(i % head_dim % half);
    return std::hypot(static_cast<double>(v[a]), static_cast<double>(v[a + half]));
  };
  for (int tk = 0; tk < n_tok; ++tk) {
    for (int i = 0; i < ld; ++i) {
      const size_t k = static_cast<size_t>(tk) * ld + i;
      if (i >= n_heads * head_dim) {
        ASSERT_EQ(x[k], x0[k]) << "padding touched";  // the stride's padding is never written
      } else {
        ASSERT_NEAR(x[k], x0[k], 4 * gpstream::testing::gamma_n(3) * pair_norm(x0, k, i))
            << "token " << tk << " element " << i;
      }
    }
  }
}

TEST(Rope, RotationsCompose) {
  // R(a) then R(b) equals R(a + b): what KvCache::rerotate relies on to move cached keys.
  const int head_dim = 64, n_heads = 2;
  const auto inv = hf_inv_freq(head_dim, 1e6);
  for (auto [a, b] : {std::pair{3.25f, 17.5f}, std::pair{0.5f, -0.5f}, std::pair{100.0f, 28.75f}}) {
    Table ta = table({a}, inv), tb = table({b}, inv), tab = table({a + b}, inv);
    const auto x0 = random_floats(n_heads * head_dim, 21);
    auto two = x0, one = x0;
    rope_apply(two.data(), n_heads * head_dim, ta.cos.data(), ta.sin.data(), 1, n_heads, head_dim);
    rope_apply(two.data(), n_heads * head_dim, tb.cos.data(), tb.sin.data(), 1, n_heads, head_dim);
    rope_apply(one.data(), n_heads * head_dim, tab.cos.data(), tab.sin.data(), 1, n_heads, head_dim);
    // Angles p·f are exact in double (fp32 × fp32) and a + b is exact here; each rotation by an fp32 table
    // is within 2γ_3‖v‖ of exact as a pair (see InverseRotationUndoesTheRotation): two plus one rotations,
    // ≤ 6γ_3‖v‖ apart.
    for (size_t i = 0; i < x0.size(); ++i) {
      const size_t p0 = i / head_dim * head_dim + i % head_dim % (head_dim / 2);
      const double norm = std::hypot(static_cast<double>(x0[p0]), static_cast<double>(x0[p0 + head_dim / 2]));
      ASSERT_NEAR(two[i], one[i], 6 * gpstream::testing::gamma_n(3) * norm)
          << "a=" << a << " b=" << b << " i=" << i;
    }
  }
}

TEST(Rope, PreservesEachPairsNorm) {
  const int head_dim = 8;
  Table t = table({12.345f}, hf_inv_freq(head_dim, 1e4));
  const auto x0 = random_floats(head_dim, 4);
  auto x = x0;
  rope_apply(x.data(), head_dim, t.cos.data(), t.sin.data(), 1, 1, head_dim);
  for (int i = 0; i < head_dim / 2; ++i) {
    const double before = std::hypot(x0[i], x0[i + head_dim / 2]),
                 after = std::hypot(x[i], x[i + head_dim / 2]);
    EXPECT_NEAR(after, before, 2 * gpstream::testing::gamma_n(3) * before);  // one fp32 rotation: 2γ_3‖v‖
  }
}

// x·w / √(Σx²/n + eps) in fp32: the n-term sum of squares (γ_n), /n, + eps, √, the reciprocal and two
// products: ≤ γ_{n+5} relative; the decimal literals carry up to half a unit of their last digit.
double rms_tol(double want, int n, double literal_ulp) {
  return gpstream::testing::gamma_n(n + 5) * std::fabs(want) + literal_ulp / 2;
}

TEST(RmsNorm, HandValues) {
  // x = [3, 4]: mean square 12.5, rms √12.5 = 3.5355339; x / rms = [0.8485281, 1.1313708].
  const float x[2] = {3.0f, 4.0f};
  const float w[2] = {1.0f, 2.0f};
  float out[2];
  rmsnorm_forward(out, 2, x, 2, w, 1, 2, 0.0f);
  EXPECT_NEAR(out[0], 0.8485281, rms_tol(0.8485281, 2, 1e-7));
  EXPECT_NEAR(out[1], 2.2627417, rms_tol(2.2627417, 2, 1e-7));
  // Gemma's (1 + w) form: weight [0, 1] with offset 1 scales by [1, 2].
  const float w0[2] = {0.0f, 1.0f};
  rmsnorm_forward(out, 2, x, 2, w0, 1, 2, 0.0f, 1.0f);
  EXPECT_NEAR(out[0], 0.8485281, rms_tol(0.8485281, 2, 1e-7));
  EXPECT_NEAR(out[1], 2.2627417, rms_tol(2.2627417, 2, 1e-7));
  // eps inside the root: ones with eps 1 → 1/√2.
  const float ones[4] = {1, 1, 1, 1}, wone[4] = {1, 1, 1, 1};
  float o4[4];
  rmsnorm_forward(o4, 4, ones, 4, wone, 1, 4, 1.0f);
  for (float v : o4) EXPECT_NEAR(v, 0.70710678, rms_tol(0.70710678, 4, 1e-8));
  // All zeros stay zeros (no 0/0) with a positive eps.
  const float zeros[4] = {};
  rmsnorm_forward(o4, 4, zeros, 4, wone, 1, 4, 1e-6f);
  for (float v : o4) EXPECT_EQ(v, 0.0f);
}

TEST(RmsNorm, RowsStridesAndInPlace) {
  // Two rows with stride 3 (one float of padding), written in place.
  float x[6] = {3.0f, 4.0f, 99.0f, -1.0f, 1.0f, 99.0f};
  const float w[2] = {1.0f, 1.0f};
  rmsnorm_forward(x, 3, x, 3, w, 2, 2, 0.0f);
  EXPECT_NEAR(x[0], 0.8485281, rms_tol(0.8485281, 2, 1e-7));
  EXPECT_NEAR(x[1], 1.1313708, rms_tol(1.1313708, 2, 1e-7));
  EXPECT_EQ(x[2], 99.0f);
  EXPECT_NEAR(x[3], -1.0, rms_tol(1.0, 2, 0));  // [-1, 1]: rms 1
  EXPECT_NEAR(x[4], 1.0, rms_tol(1.0, 2, 0));
  EXPECT_EQ(x[5], 99.0f);
}

// fast_exp's relative error (kernels/fast_exp.h: ~2e-7 over its range): 4u ≈ 2.4e-7.
constexpr double kFastExpRel = 4 * gpstream::testing::kUnitF32;
// silu(x) = x / (1 + e^-x): fast_exp's error passes at most fully (E/(1+E) ≤ 1), then 1 + E and the
// division round: ≤ (kFastExpRel + 2u) relative; the decimal literals (10 digits) are exact enough.
double silu_tol(double want) {
  return (kFastExpRel + 2 * gpstream::testing::kUnitF32) * std::fabs(want);
}

TEST(Activation, HandValues) {
  // silu(x) = x / (1 + e^-x): silu(1) = 0.7310585786, silu(-2) = -0.2384058440, silu(0) = 0.
  EXPECT_NEAR(silu(1.0f), 0.7310585786, silu_tol(0.7310585786));
  EXPECT_NEAR(silu(-2.0f), -0.2384058440, silu_tol(0.2384058440));
  EXPECT_EQ(silu(0.0f), 0.0f);
  EXPECT_EQ(silu(-200.0f), 0.0f);  // e^200 overflows to inf: the result is −0, not NaN
  EXPECT_FALSE(std::isnan(silu(-200.0f)));
  // tanh-GELU(1) = 0.5·(1 + tanh(√(2/π)·1.044715)) = 0.8411919906.
  // x·σ(2k(x + c x³)): 5 roundings in the argument z, passed on times z(1 − σ) ≤ 1; fast_exp; 1 + E, the
  // division and the product: ≤ kFastExpRel + 8u relative.
  EXPECT_NEAR(gelu_tanh(1.0f), 0.8411919906, (kFastExpRel + 8 * gpstream::testing::kUnitF32) * 0.8411919906);
  const float gate[3] = {1.0f, -2.0f, 0.0f}, up[3] = {2.0f, 0.5f, 7.0f};
  float out[3];
  gated_act_forward(out, 3, gate, up, 3, 1, 3, Activation::Silu);
  // silu(gate)·up: silu's bound plus the product's rounding.
  EXPECT_NEAR(out[0], 1.4621171572, silu_tol(1.4621171572) + gpstream::testing::kUnitF32 * 1.4621171572);
  EXPECT_NEAR(out[1], -0.1192029220, silu_tol(0.1192029220) + gpstream::testing::kUnitF32 * 0.1192029220);
  EXPECT_EQ(out[2], 0.0f);
}

TEST(Activation, SiluAgainstDoubleOverItsRange) {
  // Against x / (1 + e^-x) in double: relative error ≤ kFastExpRel + 2u (silu_tol);
  // below -88 the true value is < 2e-36, so an absolute bound there. Steps of 0.0137 cover every
  // branch of the range reduction.
  double worst = 0;
  for (double x = -120.0; x <= 120.0; x += 0.0137) {
    const float xf = static_cast<float>(x);
    const double want = static_cast<double>(xf) / (1.0 + std::exp(-static_cast<double>(xf)));
    const double got = silu(xf);
    if (xf < -88.0f) {
      EXPECT_LE(std::abs(got), 2e-36) << x;
      continue;
    }
    worst = std::max(worst, std::abs(got - want) / std::max(std::abs(want), 1e-30));
  }
  EXPECT_LE(worst, kFastExpRel + 2 * gpstream::testing::kUnitF32);
}

TEST(Activation, GatedSiluIsSiluTimesUpAtEveryLengthAndStride) {
  // The eight-lane loop and the tail give the same bits as silu() for every element; rows of 1-19
  // values at a stride of 21 exercise full vectors, tails and the padding between rows (left untouched).
  std::vector<float> gate(3 * 21), up(3 * 21);
  for (size_t i = 0; i < gate.size(); ++i)
    gate[i] = static_cast<float>(i % 13) * 1.7f - 11.0f, up[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  for (int64_t n = 1; n <= 19; ++n) {
    std::vector<float> out(3 * 21, 42.0f);
    gated_act_forward(out.data(), 21, gate.data(), up.data(), 21, 3, n, Activation::Silu);
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t i = 0; i < 21; ++i) {
        const size_t k = static_cast<size_t>(t * 21 + i);
        if (i < n)
          EXPECT_EQ(out[k], silu(gate[k]) * up[k]) << n << " " << t << " " << i;
        else
          EXPECT_EQ(out[k], 42.0f) << n << " " << t << " " << i;
      }
  }
}

}  // namespace
}  // namespace gpstream::kernels
