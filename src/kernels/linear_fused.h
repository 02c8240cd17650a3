// Several linear layers over the same input in one pass: q/k/v of an attention block, gate/up of an MLP.
// In the few-token regime (decode) the rows of all the matrices are treated as one concatenated matrix
// and split over the threads by bytes, in one parallel region: one thread wake-up and one barrier
// instead of one per matrix, and the small matrices (k and v: 128 rows) no longer run alone. Each
// output equals what linear_forward gives for its matrix alone, bit for bit: rows are computed by the
// same few-token kernel, and every thread's share of a matrix starts at an even row, so the kernel pairs
// rows as it does there. Otherwise (many tokens, quantized or mixed weight types, differing column
// counts) it is one linear_forward per output.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/kernels.h"

namespace gpstream::kernels {

// out[t * ldo + r] = row r of w · x row t (+ bias[r]) for r < w.rows, t < n_tok; bias may be null.
struct LinearOutput {
  float* out = nullptr;
  int64_t ldo = 0;
  MatrixView w;
  const float* bias = nullptr;
};

// Floats of scratch linear_forward_fused needs (the largest any one output's linear_forward needs).
int64_t linear_fused_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok, int n_threads);

// Every output from the same activations x: n_tok rows (stride ldx) of w.cols floats (fused when all the
// outputs share w.cols and w.type).
void linear_forward_fused(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int n_threads);

}  // namespace gpstream::kernels
