// Linear layer kernels (see linear.h for the three regimes).
#include "kernels/linear.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/convert.h"
#include "kernels/linear_small_batch.h"
#include "kernels/quant_dot.h"

namespace gpstream::kernels {
namespace {

// At most this many tokens: the few-token kernel (linear_small_batch.h). Measured with bench_linear on a
// 4864 x 896 matrix, one thread (docs/performance.md): for BF16 and F16 it beats the tiled path up to 11
// tokens (BF16 35-53 GFLOP/s against 4-38); with F32 weights up to 7 tokens, sgemm wins from 8.
constexpr int64_t kSmallBatch = 11;
constexpr int64_t kSmallBatchF32 = 7;
constexpr int64_t kTileRows = 64;        // rows converted per tile in the GEMM regime
constexpr int64_t kSmallBatchRows = 16;  // rows per work item of the few-token regime
constexpr int64_t kMinParallelWork = kMinParallelMultiplyAdds;
// Rows per work item of the quantized regime: a multiple of the micro-kernel's 4 rows, small enough to
// balance two threads on a 896-row matrix, large enough to amortise the scheduling.
constexpr int64_t kQuantTileRows = 32;

void linear_forward_quantized(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                              const float* bias, int64_t n_tok, float* scratch, int n_threads) {
  const QuantizedActivations xa = quantized_activations_in(scratch, n_tok, w.cols);
  const bool parallel = w.rows * w.cols * n_tok >= kMinParallelWork;
  if (parallel && n_tok > 1) {
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int64_t t = 0; t < n_tok; ++t) quantize_activations(x, ldx, t, 1, xa);
  } else {
    quantize_activations(x, ldx, 0, n_tok, xa);
  }
  const int64_t n_tiles = (w.rows + kQuantTileRows - 1) / kQuantTileRows;
#pragma omp parallel for num_threads(n_threads) schedule(dynamic) if (parallel)
  for (int64_t tile = 0; tile < n_tiles; ++tile) {
    const int64_t r0 = tile * kQuantTileRows;
    const int64_t nr = std::min(kQuantTileRows, w.rows - r0);
    quant_matmul_rows(out, ldo, w, r0, nr, xa, n_tok);
    if (bias) {
      for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t r = r0; r < r0 + nr; ++r) out[t * ldo + r] += bias[r];
    }
  }
}

// Rows per work item of the BF16-panel regime: four panels, so two threads balance on a 128-row matrix.
constexpr int64_t kPanelTileRows = 4 * kPanelRows;

void linear_forward_paneled(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                            const float* bias, int64_t n_tok, int n_threads) {
  const bool parallel = w.rows * w.cols * n_tok >= kMinParallelWork;
  const int64_t n_tiles = (w.rows + kPanelTileRows - 1) / kPanelTileRows;
#pragma omp parallel for num_threads(n_threads) schedule(dynamic) if (parallel)
  for (int64_t tile = 0; tile < n_tiles; ++tile) {
    const int64_t r0 = tile * kPanelTileRows;
    bf16_panel_matmul(out, ldo, x, ldx, w, bias, r0, std::min(kPanelTileRows, w.rows - r0), n_tok);
  }
}

}  // namespace

void set_blas_threads(int n_threads) {
  static std::atomic<int> current{0};
  const int n = std::max(1, n_threads);
  if (current.exchange(n) != n) openblas_set_num_threads(n);
}

bool linear_takes_few_tokens(WeightType type, int64_t n_tok) {
  return !is_quantized(type) && n_tok <= (type == WeightType::F32 ? kSmallBatchF32 : kSmallBatch);
}

int64_t linear_scratch_floats(const MatrixView& w, int64_t n_tok, int n_threads) {
  if (w.layout == RowLayout::Paneled16) return 0;
  if (is_quantized(w.type)) return (quantized_activations_bytes(n_tok, w.cols) + 3) / 4;
  if (linear_takes_few_tokens(w.type, n_tok)) return small_batch_scratch_floats(w.type, n_tok, w.cols);
  return linear_tiled_scratch_floats(w, n_threads);
}

int64_t linear_tiled_scratch_floats(const MatrixView& w, int n_threads) {
  if (w.type == WeightType::F32 || w.layout == RowLayout::Paneled16) return 0;
  return kTileRows * w.cols * std::max(1, n_threads);
}

void linear_forward(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                    const float* bias, int64_t n_tok, float* scratch, int n_threads) {
  const int64_t rows = w.rows, cols = w.cols;
  if (n_tok <= 0 || rows <= 0) return;
  if (is_quantized(w.type)) {
    linear_forward_quantized(out, ldo, x, ldx, w, bias, n_tok, scratch, n_threads);
    return;
  }
  if (w.layout == RowLayout::Paneled16) {
    linear_forward_paneled(out, ldo, x, ldx, w, bias, n_tok, n_threads);
    return;
  }
  if (linear_takes_few_tokens(w.type, n_tok)) {
    const PreparedActivations xp = small_batch_prepare(x, ldx, n_tok, cols, w.type, scratch);
    const bool parallel = rows * cols * n_tok >= kMinParallelWork;
    const int64_t n_tiles = (rows + kSmallBatchRows - 1) / kSmallBatchRows;
#pragma omp parallel for num_threads(n_threads) schedule(static) if (parallel)
    for (int64_t tile = 0; tile < n_tiles; ++tile) {
      const int64_t r0 = tile * kSmallBatchRows;
      small_batch_rows(out, ldo, xp, w, bias, r0, std::min(kSmallBatchRows, rows - r0), n_tok);
    }
    return;
  }
  linear_forward_tiled(out, ldo, x, ldx, w, bias, n_tok, scratch, n_threads);
}

void linear_forward_tiled(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                          const float* bias, int64_t n_tok, float* scratch, int n_threads) {
  const int64_t rows = w.rows, cols = w.cols;
  if (n_tok <= 0 || rows <= 0) return;
  if (w.layout ==
      RowLayout::Paneled16) {  // no plain rows to widen: the panel kernel is the many-token regime here
    linear_forward_paneled(out, ldo, x, ldx, w, bias, n_tok, n_threads);
    return;
  }
  if (w.type == WeightType::F32) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_tok), static_cast<int>(rows),
                static_cast<int>(cols), 1.0f, x, static_cast<int>(ldx), static_cast<const float*>(w.data),
                static_cast<int>(cols), 0.0f, out, static_cast<int>(ldo));
    if (bias) {
      for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t r = 0; r < rows; ++r) out[t * ldo + r] += bias[r];
    }
    return;
  }
  const int64_t n_tiles = (rows + kTileRows - 1) / kTileRows;
  const bool parallel = rows * cols * n_tok >= kMinParallelWork;
#pragma omp parallel for num_threads(n_threads) schedule(dynamic, 1) if (parallel)
  for (int64_t tile = 0; tile < n_tiles; ++tile) {
    float* buf = scratch + static_cast<int64_t>(omp_get_thread_num()) * kTileRows * cols;
    const int64_t r0 = tile * kTileRows;
    const int64_t nr = std::min(kTileRows, rows - r0);
    for (int64_t r = 0; r < nr; ++r) convert_row(buf + r * cols, w.row(r0 + r), w.type, cols);
    // Inside a parallel region the OpenMP build of OpenBLAS runs single-threaded.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_tok), static_cast<int>(nr),
                static_cast<int>(cols), 1.0f, x, static_cast<int>(ldx), buf, static_cast<int>(cols), 0.0f,
                out + r0, static_cast<int>(ldo));
    if (bias) {
      for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t r = 0; r < nr; ++r) out[t * ldo + r0 + r] += bias[r0 + r];
    }
  }
}

void linear_forward_ref(float* out, int64_t ldo, const float* x, int64_t ldx, const MatrixView& w,
                        const float* bias, int64_t n_tok) {
  std::vector<float> widened(w.layout == RowLayout::Paneled16 ? static_cast<size_t>(w.cols) : 0);
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      float dot;
      if (w.layout == RowLayout::Paneled16) {
        panel_bf16_read_row(widened.data(), w, r);
        dot = dot_row_ref(x + t * ldx, widened.data(), WeightType::F32, w.cols);
      } else {
        dot = dot_row_ref(x + t * ldx, w.row(r), w.type, w.cols);
      }
      out[t * ldo + r] = dot + (bias ? bias[r] : 0.0f);
    }
}

}  // namespace gpstream::kernels
