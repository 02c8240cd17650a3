// Row conversions from stored weight precision to fp32 (AVX2/F16C with scalar tails), and dot products
// of an fp32 vector with a stored-precision row. These are the inner loops of the linear kernels.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

// dst[0..n) = row as fp32.
void convert_row(float* dst, const void* row, WeightType type, int64_t n);
// sum_i x[i] * row[i], accumulated in fp32.
float dot_row(const float* x, const void* row, WeightType type, int64_t n);
// Scalar twins (reference and fallback).
void convert_row_ref(float* dst, const void* row, WeightType type, int64_t n);
float dot_row_ref(const float* x, const void* row, WeightType type, int64_t n);
// sum_i a[i] * b[i] for fp32 vectors.
float dot_f32(const float* a, const float* b, int64_t n);

}  // namespace gpstream::kernels
