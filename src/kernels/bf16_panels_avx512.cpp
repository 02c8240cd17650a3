// The BF16 panel micro-kernel in AVX-512F (see bf16_panels_avx512.h). Sixteen rows of a panel column widen
// into one zmm (vpmovzxwd, then a 16-bit shift), so a tile holds two panels (32 rows) of up to twelve tokens
// in 24 accumulators: half the broadcasts per FMA of the AVX2 kernel's 16 x 6 tile, at twice the lanes.
// Every output is still the sum over k in ascending order with one fp32 FMA per column, started from zero,
// then the bias: the AVX2 kernel's sequence. Only the functions marked with the target attribute contain
// AVX-512 code; nothing here is inline in a header, so no AVX-512 instance of a shared template can be
// picked by the linker for an AVX2-only caller.
#include "kernels/bf16_panels_avx512.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "kernels/bf16_panels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GPSTREAM_PANEL_AVX512 1
#endif

namespace gpstream::kernels {

#ifdef GPSTREAM_PANEL_AVX512

namespace {

#define GPSTREAM_AVX512 __attribute__((target("avx512f")))

constexpr int kMaxTileTokens = 12;  // 2 panels x 12 tokens = 24 of the 32 zmm registers

// From this many tokens on, a tile takes two panels. One token is bound by memory bandwidth, and one panel at
// a time is one sequential stream: two interleaved streams 16 * cols values apart made a single session of
// bench_stream --small 1.5x slower.
constexpr int64_t kTwoPanelMinTokens = 2;

// The masked forms with every lane set: GCC 12's unmasked ones start from _mm512_undefined_*, which -Werror
// rejects as a use of an uninitialised value.
constexpr __mmask16 kAll = 0xFFFF;

// Sixteen BF16 values (one panel column) widened to fp32, lane s from slot s.
GPSTREAM_AVX512 inline __m512 widen(const uint16_t* column) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(column));
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, v), 16));
}

// One tile: NP panels (16 rows each, consecutive in memory) times NT tokens over all columns.
template <int NP, int NT>
GPSTREAM_AVX512 void panel_tile(float* out, int64_t ldo, const float* x, int64_t ldx, const uint16_t* panel,
                                int64_t cols, const float* bias, PanelPrefetch pf) {
  static_assert((NP == 1 || NP == 2) && NT >= 1 && NT <= kMaxTileTokens);
  __m512 acc[NP][NT];
#pragma GCC unroll 24
  for (int p = 0; p < NP; ++p)
#pragma GCC unroll 12
    for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
  const uint16_t* second = panel + kPanelRows * cols;
  int64_t countdown = pf.every;
  for (int64_t k = 0; k < cols; ++k) {
    if (pf.line && --countdown == 0) {
      _mm_prefetch(pf.line, _MM_HINT_T1);
      pf.line += 64;
      countdown = pf.every;
    }
    __m512 wv[NP];
    wv[0] = widen(panel + 16 * k);
    if constexpr (NP == 2) wv[1] = widen(second + 16 * k);
#pragma GCC unroll 12
    for (int t = 0; t < NT; ++t) {
      const __m512 b = _mm512_set1_ps(x[t * ldx + k]);
#pragma GCC unroll 2
      for (int p = 0; p < NP; ++p) acc[p][t] = _mm512_fmadd_ps(wv[p], b, acc[p][t]);
    }
  }
  // Lane s holds the row whose slot is s; output lane i takes lane slot_of_row(i).
  const __m512i order = _mm512_setr_epi32(
      panel_slot_of_row(0), panel_slot_of_row(1), panel_slot_of_row(2), panel_slot_of_row(3),
      panel_slot_of_row(4), panel_slot_of_row(5), panel_slot_of_row(6), panel_slot_of_row(7),
      panel_slot_of_row(8), panel_slot_of_row(9), panel_slot_of_row(10), panel_slot_of_row(11),
      panel_slot_of_row(12), panel_slot_of_row(13), panel_slot_of_row(14), panel_slot_of_row(15));
#pragma GCC unroll 2
  for (int p = 0; p < NP; ++p) {
    const __m512 bv = bias ? _mm512_loadu_ps(bias + p * kPanelRows) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int t = 0; t < NT; ++t)
      _mm512_storeu_ps(out + t * ldo + p * kPanelRows,
                       _mm512_add_ps(_mm512_maskz_permutexvar_ps(kAll, order, acc[p][t]), bv));
  }
}

using PanelTile = void (*)(float*, int64_t, const float*, int64_t, const uint16_t*, int64_t, const float*,
                           PanelPrefetch);

template <int NP, int... NT>
constexpr auto tiles_of(std::integer_sequence<int, NT...>) {
  return std::array<PanelTile, sizeof...(NT)>{panel_tile<NP, NT + 1>...};
}

// kTiles[NP - 1][NT - 1].
constexpr std::array<std::array<PanelTile, kMaxTileTokens>, 2> kTiles = {
    tiles_of<1>(std::make_integer_sequence<int, kMaxTileTokens>{}),
    tiles_of<2>(std::make_integer_sequence<int, kMaxTileTokens>{})};

#undef GPSTREAM_AVX512

}  // namespace

void bf16_panel_matmul_avx512(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                              const float* bias, int64_t r0, int64_t nr, int64_t n_tok) {
  const int64_t cols = w.cols;
  // The fewest tiles that hold n_tok tokens, as even as can be (23 = 12 + 11), as in the AVX2 kernel.
  const int64_t n_tiles = (n_tok + kMaxTileTokens - 1) / kMaxTileTokens;
  for (int64_t r = r0; r < r0 + nr;) {
    const int64_t np = n_tok >= kTwoPanelMinTokens && r + 2 * kPanelRows <= r0 + nr ? 2 : 1;
    const auto* panel = static_cast<const uint16_t*>(w.row(r));
    // The group after this one, as far as this call goes (at most two panels), fetched into L2 meanwhile.
    const int64_t next_rows = std::min<int64_t>(2 * kPanelRows, r0 + nr - (r + np * kPanelRows));
    const char* next = n_tok >= kPanelPrefetchMinTokens && next_rows > 0
                           ? static_cast<const char*>(w.row(r + np * kPanelRows))
                           : nullptr;
    const int64_t lines = next_rows * cols * 2 / 64;
    const float* b = bias ? bias + r : nullptr;
    for (int64_t i = 0, t = 0; i < n_tiles; ++i) {
      const int64_t nt = panel_tile_tokens(n_tok, n_tiles, i);
      kTiles[np - 1][nt - 1](out + t * ldo + r, ldo, x + t * ldx, ldx, panel, cols, b,
                             panel_prefetch_share(next, lines, n_tiles, i, cols));
      t += nt;
    }
    r += np * kPanelRows;
  }
}

#else

// Unreachable: cpu_has_avx512() is false where this file has no AVX-512 code.
void bf16_panel_matmul_avx512(float*, int64_t, const float*, int64_t, const MatrixView&, const float*,
                              int64_t, int64_t, int64_t) {
  std::abort();
}

#endif

}  // namespace gpstream::kernels
