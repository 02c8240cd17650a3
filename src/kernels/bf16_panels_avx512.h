// The AVX-512F twin of bf16_panel_matmul (bf16_panels.h), for CPUs that have it (cpu_isa.h). Same
// arguments, same panels and the same per-output sum, so its outputs equal the AVX2 kernel's bit for bit.
// Only bf16_panel_matmul calls it, after checking kernel_isa().
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

void bf16_panel_matmul_avx512(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                              const float* bias, int64_t r0, int64_t nr, int64_t n_tok);

}  // namespace gpstream::kernels
