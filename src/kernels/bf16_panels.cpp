// BF16 panels and their GEMM micro-kernel (see bf16_panels.h). AVX2 + FMA when the build targets them, a
// scalar twin with the same summation order otherwise; on CPUs with AVX-512F, bf16_panel_matmul hands the
// work to the AVX-512 twin (bf16_panels_avx512.cpp), also with the same order.
#include "kernels/bf16_panels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GPSTREAM_PANEL_AVX2 1
#endif

#include "kernels/bf16_panels_avx512.h"
#include "kernels/cpu_isa.h"
#include "util/half.h"

namespace gpstream::kernels {
namespace {

// Tokens per micro-kernel tile: 2 x 6 accumulators, two widened weight vectors and a broadcast fit the 16
// ymm registers.
constexpr int kTileTokens = 6;

#ifdef GPSTREAM_PANEL_AVX2

// One panel (16 rows) times NT tokens over all columns. The accumulators are named variables: GCC keeps an
// array of __m256 in memory inside the loop.
template <int NT>
void panel_tile(float* out, int64_t ldo, const float* x, int64_t ldx, const uint16_t* panel, int64_t cols,
                const float* bias, PanelPrefetch pf) {
  static_assert(NT >= 1 && NT <= kTileTokens);
  int64_t countdown = pf.every;
  __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
  __m256 a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
  const __m256i zero = _mm256_setzero_si256();
  const float* x0 = x;
  const float* x1 = x0 + (NT > 1 ? ldx : 0);
  const float* x2 = x1 + (NT > 2 ? ldx : 0);
  const float* x3 = x2 + (NT > 3 ? ldx : 0);
  const float* x4 = x3 + (NT > 4 ? ldx : 0);
  const float* x5 = x4 + (NT > 5 ? ldx : 0);
  for (int64_t k = 0; k < cols; ++k) {
    if (pf.line && --countdown == 0) {
      _mm_prefetch(pf.line, _MM_HINT_T1);
      pf.line += 64;
      countdown = pf.every;
    }
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + 16 * k));
    const __m256 lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v));  // rows 0-7
    const __m256 hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v));  // rows 8-15
    __m256 b = _mm256_broadcast_ss(x0 + k);
    a00 = _mm256_fmadd_ps(lo, b, a00), a01 = _mm256_fmadd_ps(hi, b, a01);
    if constexpr (NT > 1)
      b = _mm256_broadcast_ss(x1 + k), a10 = _mm256_fmadd_ps(lo, b, a10), a11 = _mm256_fmadd_ps(hi, b, a11);
    if constexpr (NT > 2)
      b = _mm256_broadcast_ss(x2 + k), a20 = _mm256_fmadd_ps(lo, b, a20), a21 = _mm256_fmadd_ps(hi, b, a21);
    if constexpr (NT > 3)
      b = _mm256_broadcast_ss(x3 + k), a30 = _mm256_fmadd_ps(lo, b, a30), a31 = _mm256_fmadd_ps(hi, b, a31);
    if constexpr (NT > 4)
      b = _mm256_broadcast_ss(x4 + k), a40 = _mm256_fmadd_ps(lo, b, a40), a41 = _mm256_fmadd_ps(hi, b, a41);
    if constexpr (NT > 5)
      b = _mm256_broadcast_ss(x5 + k), a50 = _mm256_fmadd_ps(lo, b, a50), a51 = _mm256_fmadd_ps(hi, b, a51);
  }
  const __m256 b0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 b1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
  auto store = [&](int t, __m256 lo, __m256 hi) {
    _mm256_storeu_ps(out + t * ldo, _mm256_add_ps(lo, b0));
    _mm256_storeu_ps(out + t * ldo + 8, _mm256_add_ps(hi, b1));
  };
  store(0, a00, a01);
  if constexpr (NT > 1) store(1, a10, a11);
  if constexpr (NT > 2) store(2, a20, a21);
  if constexpr (NT > 3) store(3, a30, a31);
  if constexpr (NT > 4) store(4, a40, a41);
  if constexpr (NT > 5) store(5, a50, a51);
}

#else

// The scalar twin: the same per-output order (k ascending, one fused multiply-add each, then the bias).
template <int NT>
void panel_tile(float* out, int64_t ldo, const float* x, int64_t ldx, const uint16_t* panel, int64_t cols,
                const float* bias, PanelPrefetch) {
  float acc[NT][kPanelRows] = {};
  for (int64_t k = 0; k < cols; ++k)
    for (int i = 0; i < kPanelRows; ++i) {
      const float wv = bf16_to_f32(panel[16 * k + panel_slot_of_row(i)]);
      for (int t = 0; t < NT; ++t) acc[t][i] = std::fma(wv, x[t * ldx + k], acc[t][i]);
    }
  for (int t = 0; t < NT; ++t)
    for (int i = 0; i < kPanelRows; ++i) out[t * ldo + i] = acc[t][i] + (bias ? bias[i] : 0.0f);
}

#endif

// The tile for 1-6 tokens (index: their count).
using PanelTile = void (*)(float*, int64_t, const float*, int64_t, const uint16_t*, int64_t, const float*,
                           PanelPrefetch);
constexpr PanelTile kTiles[kTileTokens + 1] = {nullptr,       panel_tile<1>, panel_tile<2>, panel_tile<3>,
                                               panel_tile<4>, panel_tile<5>, panel_tile<6>};

}  // namespace

bool can_panel_bf16(const MatrixView& w) {
  return w.type == WeightType::BF16 && w.layout != RowLayout::Paneled16 && w.rows > 0 &&
         w.rows % kPanelRows == 0 && w.cols > 0;
}

void panel_bf16_rows(const MatrixView& w, void* dst) {
  auto* out = static_cast<uint16_t*>(dst);
  for (int64_t g = 0; g < w.rows; g += kPanelRows) {
    uint16_t* panel = out + g * w.cols;
    for (int i = 0; i < kPanelRows; ++i) {
      const auto* src = static_cast<const uint16_t*>(w.row(g + i));
      const int s = panel_slot_of_row(i);
      for (int64_t k = 0; k < w.cols; ++k) panel[16 * k + s] = src[k];
    }
  }
}

void panel_bf16_read_row(float* dst, const MatrixView& w, int64_t r) {
  const auto* panel = static_cast<const uint16_t*>(w.row(r - r % kPanelRows));
  const int s = panel_slot_of_row(static_cast<int>(r % kPanelRows));
  for (int64_t k = 0; k < w.cols; ++k) dst[k] = bf16_to_f32(panel[16 * k + s]);
}

void bf16_panel_matmul(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                       const float* bias, int64_t r0, int64_t nr, int64_t n_tok) {
  if (kernel_isa() == Isa::Avx512) {
    bf16_panel_matmul_avx512(out, ldo, x, ldx, w, bias, r0, nr, n_tok);
    return;
  }
  const int64_t cols = w.cols;
  for (int64_t r = r0; r < r0 + nr; r += kPanelRows) {
    const auto* panel = static_cast<const uint16_t*>(w.row(r));
    const auto* next = reinterpret_cast<const char*>(
        n_tok >= kPanelPrefetchMinTokens && r + kPanelRows < w.rows ? panel + kPanelRows * cols : nullptr);
    const float* b = bias ? bias + r : nullptr;
    // The fewest tiles that hold n_tok tokens, as even as can be (19 = 5 + 5 + 5 + 4, not 6 + 6 + 6 + 1):
    // a tile of fewer than 4 tokens waits on its accumulators' FMA latency and costs as much per column
    // as one of 4, so a lone token at the end would cost two thirds of a full tile.
    const int64_t n_tiles = (n_tok + kTileTokens - 1) / kTileTokens;
    const int64_t lines = cols / 2;  // 32 bytes a column
    for (int64_t i = 0, t = 0; i < n_tiles; ++i) {
      const int64_t nt = panel_tile_tokens(n_tok, n_tiles, i);
      kTiles[nt](out + t * ldo + r, ldo, x + t * ldx, ldx, panel, cols, b,
                 panel_prefetch_share(next, lines, n_tiles, i, cols));
      t += nt;
    }
  }
}

}  // namespace gpstream::kernels
