// Several linear layers over the same input in one pass: q/k/v of an attention block, gate/up of an MLP.
// In the few-token regime (decode; quantized and BF16-paneled weights at any token count) the rows of all
// the matrices are treated as one concatenated matrix and split over the threads by bytes: one thread
// wake-up and one barrier instead of one per matrix, and the small matrices (k and v: 128 rows) no longer
// run alone.
// Each thread prepares its own copy of the activations (BF16 column order, Q8_0 quantization), so a team
// that is already running (model/transformer_team.cpp) computes its shares with no barrier before them.
// Each output equals what linear_forward gives for its matrix alone, bit for bit: rows are computed by the
// same kernels, and every share of a matrix starts at a multiple of sixteen rows, so the kernels group rows
// as they do there. Otherwise (many tokens with fp weights, differing column counts) it is one
// linear_forward per output.
#pragma once

#include <atomic>
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

// Whether linear_share computes these outputs for n_tok tokens: every matrix is quantized, BF16-paneled or
// takes the few-token kernel, and all have the same column count.
bool linear_share_applies(std::span<const LinearOutput> outputs, int64_t n_tok);

// Floats of scratch one thread's linear_share needs.
int64_t linear_share_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok);

// The share of thread `id` in a running team of `team` threads: the rows of the outputs' concatenation
// between byte offsets total·id/team and total·(id+1)/team, moved to multiples of sixteen rows. The shares
// of ids 0..team-1 cover every row once. x: n_tok rows (stride ldx); scratch: this thread's own
// linear_share_scratch_floats floats, or null for a per-thread buffer. Requires linear_share_applies.
void linear_share(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                  float* scratch, int id, int team);

// The same rows taken in pieces by whichever thread of a running team is free (guided: each piece a part
// of what is left, at least 64 KB, at multiples of sixteen rows), so a thread slowed down by the machine
// does less of the work. next_byte: shared by the team, 0 before the first thread starts, not reused
// until every thread has returned.
void linear_share_dynamic(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int team, std::atomic<size_t>& next_byte);

// Floats of scratch linear_forward_fused needs with n_threads threads.
int64_t linear_fused_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok, int n_threads);

// Every output from the same activations x: n_tok rows (stride ldx) of w.cols floats, as linear_share
// shares over n_threads threads when it applies.
void linear_forward_fused(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int n_threads);

}  // namespace gpstream::kernels
