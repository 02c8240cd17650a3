// convert_row / dot_row / dot_f32 (AVX2) against their scalar _ref twins: every 16-bit pattern
// converted (exhaustive, NaNs compared as NaN), dot products on lengths around the 8- and 32-wide
// vector steps.
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../testing/fp_bounds.h"
#include "kernel_test_util.h"

namespace gpstream::kernels {
namespace {

using gpstream::testing::random_floats;
using gpstream::testing::store_matrix;
using gpstream::testing::type_name;

TEST(ConvertRow, EverySixteenBitPatternMatchesTheScalarTwin) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (WeightType type : {WeightType::F16, WeightType::BF16}) {
    // Offsets 0 and 3: aligned and unaligned starts; length 65533 leaves a scalar tail.
    for (int64_t off : {0, 3}) {
      const int64_t n = static_cast<int64_t>(all.size()) - off;
      std::vector<float> fast(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
      convert_row(fast.data(), all.data() + off, type, n);
      convert_row_ref(ref.data(), all.data() + off, type, n);
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(ref[i])) {
          ASSERT_TRUE(std::isnan(fast[i])) << type_name(type) << " pattern " << i + off;
        } else {
          uint32_t a, b;
          std::memcpy(&a, &fast[i], 4);
          std::memcpy(&b, &ref[i], 4);
          ASSERT_EQ(a, b) << type_name(type) << " pattern " << std::hex << i + off;
        }
      }
    }
  }
}

TEST(ConvertRow, F32IsACopyAndShortRowsWork) {
  for (int64_t n : {0, 1, 7, 8, 9, 31}) {
    const auto v = random_floats(static_cast<size_t>(n) + 1, 2);
    for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
      auto m = store_matrix(v, 1, n + 1, type);
      std::vector<float> fast(static_cast<size_t>(n) + 1, -7.0f), ref(static_cast<size_t>(n) + 1, -7.0f);
      convert_row(fast.data(), m.view.data, type, n);
      convert_row_ref(ref.data(), m.view.data, type, n);
      EXPECT_EQ(fast, ref) << type_name(type) << " n=" << n;
      EXPECT_EQ(fast[static_cast<size_t>(n)], -7.0f) << "wrote past n";
      if (type == WeightType::F32) {
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(fast[i], v[i]);
      }
    }
  }
}

TEST(DotRow, MatchesTheScalarTwin) {
  for (int64_t n : {1, 5, 8, 13, 31, 32, 33, 63, 64, 65, 100, 896, 4867}) {
    const auto x = random_floats(static_cast<size_t>(n), 3 + n);
    const auto w = random_floats(static_cast<size_t>(n), 4 + n, -2.0f, 2.0f);
    // fp32 sums of n terms of the stored (widened) weights against the double reference rounded to fp32:
    // γ_n Σ|x ŵ| (Higham (3.5)) + u·|ref| (linear_output_bound).
    for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
      auto m = store_matrix(w, 1, n, type);
      const std::vector<float> wf = gpstream::testing::matrix_rows_f32(m.view);
      const float fast = dot_row(x.data(), m.view.data, type, n);
      const float ref = dot_row_ref(x.data(), m.view.data, type, n);
      EXPECT_NEAR(fast, ref, gpstream::testing::linear_output_bound(x.data(), wf.data(), n, 0, ref))
          << type_name(type) << " n=" << n;
    }
    const float f = dot_f32(x.data(), w.data(), n);
    const float ref = dot_row_ref(x.data(), w.data(), WeightType::F32, n);
    EXPECT_NEAR(f, ref, gpstream::testing::linear_output_bound(x.data(), w.data(), n, 0, ref))
        << "dot_f32 n=" << n;
  }
}

TEST(DotRow, HandValues) {
  // 1·1 + 2·0.5 + ... exactly representable: sum over i < 40 of (i+1) · 0.5 = 0.5 · 820 = 410.
  std::vector<float> x(40), w(40, 0.5f);
  for (int i = 0; i < 40; ++i) x[i] = static_cast<float>(i + 1);
  for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
    auto m = store_matrix(w, 1, 40, type);
    EXPECT_EQ(dot_row(x.data(), m.view.data, type, 40), 410.0f) << type_name(type);
    EXPECT_EQ(dot_row_ref(x.data(), m.view.data, type, 40), 410.0f) << type_name(type);
  }
  EXPECT_EQ(dot_f32(x.data(), w.data(), 0), 0.0f);
}

}  // namespace
}  // namespace gpstream::kernels
