// Helpers for kernel tests: random fp32 data and weight matrices stored as F32 / F16 / BF16 bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quant_blocks.h"
#include "util/half.h"

namespace gpstream::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A weight matrix in a stored precision, owning its bytes.
struct StoredMatrix {
  std::vector<uint8_t> bytes;
  kernels::MatrixView view;
};

inline StoredMatrix store_matrix(const std::vector<float>& values, int64_t rows, int64_t cols,
                                 kernels::WeightType type) {
  StoredMatrix m;
  const size_t n = static_cast<size_t>(rows * cols);
  if (kernels::is_quantized(type)) {
    m.bytes.resize(static_cast<size_t>(rows) * kernels::row_bytes(type, cols));
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t* dst = m.bytes.data() + static_cast<size_t>(r) * kernels::row_bytes(type, cols);
      if (type == kernels::WeightType::Q8_0) {
        kernels::quantize_row_q8_0(values.data() + r * cols, reinterpret_cast<kernels::BlockQ8_0*>(dst),
                                   cols);
      } else {
        kernels::quantize_row_q4_0(values.data() + r * cols, reinterpret_cast<kernels::BlockQ4_0*>(dst),
                                   cols);
      }
    }
  } else if (type == kernels::WeightType::F32) {
    m.bytes.resize(n * 4);
    std::memcpy(m.bytes.data(), values.data(), n * 4);
  } else {
    m.bytes.resize(n * 2);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = type == kernels::WeightType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
      std::memcpy(m.bytes.data() + 2 * i, &h, 2);
    }
  }
  m.view = kernels::MatrixView{type, rows, cols, m.bytes.data()};
  return m;
}

inline const char* type_name(kernels::WeightType t) {
  switch (t) {
    case kernels::WeightType::F32:
      return "F32";
    case kernels::WeightType::F16:
      return "F16";
    case kernels::WeightType::BF16:
      return "BF16";
    case kernels::WeightType::Q8_0:
      return "Q8_0";
    case kernels::WeightType::Q4_0:
      return "Q4_0";
  }
  return "?";
}

}  // namespace gpstream::testing
