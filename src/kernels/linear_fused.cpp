// Fused linear layers over one input (see linear_fused.h): the rows of all the matrices split over the
// threads by bytes, in one parallel region.
#include "kernels/linear_fused.h"

#include <omp.h>

#include <algorithm>

#include "kernels/linear.h"
#include "kernels/linear_small_batch.h"

namespace gpstream::kernels {
namespace {

// A place in the concatenated rows: row `row` of output `output` (output == count: the end).
struct RowPlace {
  size_t output = 0;
  int64_t row = 0;
};

// The first even row (or the end of its matrix) whose first byte lies at or after `byte` of the
// concatenation of every output's weight bytes. Monotone in `byte`, so consecutive boundaries give the
// threads disjoint ranges covering every row; even starts keep the kernel's row pairs.
RowPlace boundary(std::span<const LinearOutput> outputs, size_t byte) {
  size_t base = 0;
  for (size_t p = 0; p < outputs.size(); ++p) {
    const size_t rb = outputs[p].w.row_bytes();
    const size_t bytes = rb * static_cast<size_t>(outputs[p].w.rows);
    if (byte < base + bytes) {
      int64_t r = static_cast<int64_t>((byte - base + rb - 1) / rb);
      r += r & 1;
      if (r >= outputs[p].w.rows) return {p + 1, 0};
      return {p, r};
    }
    base += bytes;
  }
  return {outputs.size(), 0};
}

bool fusable(std::span<const LinearOutput> outputs, int64_t n_tok, int64_t cols) {
  const WeightType type = outputs.front().w.type;
  if (!linear_takes_few_tokens(type, n_tok)) return false;
  return std::all_of(outputs.begin(), outputs.end(),
                     [&](const LinearOutput& o) { return o.w.type == type && o.w.cols == cols; });
}

}  // namespace

int64_t linear_fused_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok, int n_threads) {
  int64_t floats = 0;
  for (const LinearOutput& o : outputs)
    floats = std::max(floats, linear_scratch_floats(o.w, n_tok, n_threads));
  return floats;
}

void linear_forward_fused(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int n_threads) {
  if (outputs.empty() || n_tok <= 0) return;
  const int64_t cols = outputs.front().w.cols;
  if (!fusable(outputs, n_tok, cols)) {
    for (const LinearOutput& o : outputs)
      linear_forward(o.out, o.ldo, x, ldx, o.w, o.bias, n_tok, scratch, n_threads);
    return;
  }
  const PreparedActivations xp = small_batch_prepare(x, ldx, n_tok, cols, outputs.front().w.type, scratch);
  size_t total_bytes = 0;
  int64_t total_rows = 0;
  for (const LinearOutput& o : outputs) {
    total_bytes += o.w.row_bytes() * static_cast<size_t>(o.w.rows);
    total_rows += o.w.rows;
  }
  const bool parallel = total_rows * cols * n_tok >= kMinParallelMultiplyAdds;
#pragma omp parallel num_threads(n_threads) if (parallel)
  {
    const size_t id = static_cast<size_t>(omp_get_thread_num());
    const size_t team = static_cast<size_t>(omp_get_num_threads());
    const RowPlace begin = boundary(outputs, total_bytes * id / team);
    const RowPlace end =
        id + 1 == team ? RowPlace{outputs.size(), 0} : boundary(outputs, total_bytes * (id + 1) / team);
    for (size_t p = begin.output; p < outputs.size() && p <= end.output; ++p) {
      const LinearOutput& o = outputs[p];
      const int64_t r0 = p == begin.output ? begin.row : 0;
      const int64_t r1 = p == end.output ? end.row : o.w.rows;
      if (r1 > r0) small_batch_rows(o.out, o.ldo, xp, o.w, o.bias, r0, r1 - r0, n_tok);
    }
  }
}

}  // namespace gpstream::kernels
