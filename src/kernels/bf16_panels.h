// BF16 weights in panels of sixteen rows, for a GEMM micro-kernel that is compute-bound from a few tokens
// on: batched scheduler rounds, re-feeds and prefill of BF16 models (the dtype Hugging Face ships).
//
// Layout (RowLayout::Paneled16): rows 16g..16g+15 keep the bytes they had (row(16g) is the panel's
// start), reordered column-major: for column k, 16 values at panel + 32k bytes, in the order
//   rows 0-3, 8-11, 4-7, 12-15,
// so that interleaving a 32-byte load with zeros (vpunpcklwd / vpunpckhwd, the shuffle port) widens rows
// 0-7 and rows 8-15 to fp32 without a shift on the FMA ports. The kernel keeps 2 x NT accumulators (16 rows
// of up to six tokens), broadcasts one activation per token and column, and sums every output over k in
// order with one fp32 FMA per column — the same sequence whatever the tile, thread split or token count,
// so a token's outputs do not depend on what it is batched with. On CPUs with AVX-512F an AVX-512 twin
// (bf16_panels_avx512.h: 32 rows of up to twelve tokens) computes the same sequence, bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.h"

namespace gpstream::kernels {

inline constexpr int64_t kPanelRows = 16;

// Position of row i (0..15) of a panel within one column's sixteen values (the order above).
constexpr int panel_slot_of_row(int i) {
  return (i % 4) + (i / 8) * 4 + ((i / 4) % 2) * 8;
}

// True when w is BF16 in plain rows and can be paneled (rows % 16 == 0).
bool can_panel_bf16(const MatrixView& w);

// Writes w (BF16, plain rows, can_panel_bf16) to dst (w.rows * w.cols * 2 bytes) in the panel layout.
void panel_bf16_rows(const MatrixView& w, void* dst);

// Row r of a paneled matrix widened to fp32 (n = w.cols floats): for tests and lookups, not for speed.
void panel_bf16_read_row(float* dst, const MatrixView& w, int64_t r);

// How bf16_panel_matmul and its AVX-512 twin cut a call into tiles, shared so that the two split alike.
// From this many tokens on, a tile fetches the next panels into L2 ahead of use (bench_linear on the 272 MB
// head, two threads: +15 % at 2 tokens, +40 % at 3, +8-10 % at 16-23). At one token it measured no gain:
// the columns go by slowly enough for the hardware prefetchers.
inline constexpr int64_t kPanelPrefetchMinTokens = 2;

// Lines to fetch while a tile computes: from line, one every `every` columns; none when line is null.
struct PanelPrefetch {
  const char* line = nullptr;
  int64_t every = 0;
};

// Tokens of tile i when n_tok tokens go into n_tiles tiles as even as can be (19 in 4: 5 + 5 + 5 + 4).
inline int64_t panel_tile_tokens(int64_t n_tok, int64_t n_tiles, int64_t i) {
  return n_tok / n_tiles + (i < n_tok % n_tiles);
}

// Tile i's even share of the `lines` 64-byte lines from next (null: none), spread over its cols columns. The
// matrices stream from memory, and a compute-bound tile should not stall on them; fetched all at once by the
// first tile, the lines came late (-8-10 %).
inline PanelPrefetch panel_prefetch_share(const char* next, int64_t lines, int64_t n_tiles, int64_t i,
                                          int64_t cols) {
  const int64_t l0 = lines * i / n_tiles, l1 = lines * (i + 1) / n_tiles;
  if (next == nullptr || l1 <= l0) return {};
  return {next + 64 * l0, std::max<int64_t>(1, cols / (l1 - l0))};
}

// out[t * ldo + r] = row r of w · x row t (+ bias[r]) for r in [r0, r0 + nr), t < n_tok; x rows at stride
// ldx. w.layout == RowLayout::Paneled16; r0 and nr multiples of 16. Runs the AVX-512 twin
// (bf16_panels_avx512.h) when kernel_isa() says so.
void bf16_panel_matmul(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                       const float* bias, int64_t r0, int64_t nr, int64_t n_tok);

}  // namespace gpstream::kernels
