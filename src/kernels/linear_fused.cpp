// Fused linear layers over one input (see linear_fused.h): the rows of all the matrices split over the
// threads by bytes, each thread preparing its own activations.
#include "kernels/linear_fused.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/linear.h"
#include "kernels/linear_small_batch.h"
#include "kernels/quant_dot.h"

namespace gpstream::kernels {
namespace {

// Shares start at multiples of this many rows: the BF16 kernel pairs rows from even rows on, the
// quantized kernels group four rows from multiples of four, or eight interleaved rows from multiples
// of eight (their tiles start at multiples of 32), and BF16 panels hold sixteen rows.
constexpr int64_t kShareRowAlign = kPanelRows;
// The smallest piece a thread takes in linear_share_dynamic: ~2.5 µs of streaming on one core.
constexpr size_t kMinDynamicChunkBytes = 64 * 1024;

// A place in the concatenated rows: row `row` of output `output` (output == count: the end).
struct RowPlace {
  size_t output = 0;
  int64_t row = 0;
};

// The first aligned row (or the end of its matrix) whose first byte lies at or after `byte` of the
// concatenation of every output's weight bytes. Monotone in `byte`, so consecutive boundaries give the
// threads disjoint ranges covering every row.
RowPlace boundary(std::span<const LinearOutput> outputs, size_t byte) {
  size_t base = 0;
  for (size_t p = 0; p < outputs.size(); ++p) {
    const size_t rb = outputs[p].w.row_bytes();
    const size_t bytes = outputs[p].w.bytes();
    if (byte < base + bytes) {
      int64_t r = static_cast<int64_t>((byte - base + rb - 1) / rb);
      r = (r + kShareRowAlign - 1) / kShareRowAlign * kShareRowAlign;
      if (r >= outputs[p].w.rows) return {p + 1, 0};
      return {p, r};
    }
    base += bytes;
  }
  return {outputs.size(), 0};
}

// Quantized and paneled matrices are computed by row shares at any token count, the others while they
// take the few-token kernel.
bool shareable(const MatrixView& w, int64_t n_tok) {
  return is_quantized(w.type) || w.layout == RowLayout::Paneled16 || linear_takes_few_tokens(w.type, n_tok);
}

// The scratch layout of one thread: the BF16 reordered activations (when a plain BF16 matrix reads them),
// then the quantized ones.
int64_t bf16_floats(std::span<const LinearOutput> outputs, int64_t n_tok) {
  const bool plain_bf16 = std::any_of(outputs.begin(), outputs.end(), [](const LinearOutput& o) {
    return o.w.type == WeightType::BF16 && o.w.layout != RowLayout::Paneled16;
  });
  return plain_bf16 ? small_batch_scratch_floats(WeightType::BF16, n_tok, outputs.front().w.cols) : 0;
}
int64_t quant_floats(std::span<const LinearOutput> outputs, int64_t n_tok) {
  return (quantized_activations_bytes(n_tok, outputs.front().w.cols) + 3) / 4;
}

}  // namespace

bool linear_share_applies(std::span<const LinearOutput> outputs, int64_t n_tok) {
  if (outputs.empty()) return false;
  const int64_t cols = outputs.front().w.cols;
  return std::all_of(outputs.begin(), outputs.end(), [&](const LinearOutput& o) {
    return o.w.cols == cols && shareable(o.w, n_tok) && (!is_quantized(o.w.type) || cols % 32 == 0);
  });
}

int64_t linear_share_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok) {
  if (outputs.empty()) return 0;
  const bool quant = std::any_of(outputs.begin(), outputs.end(),
                                 [](const LinearOutput& o) { return is_quantized(o.w.type); });
  return bf16_floats(outputs, n_tok) + (quant ? quant_floats(outputs, n_tok) : 0);
}

namespace {

// The rows of `outputs` between two places, with the activations each kernel reads prepared on first use
// in this thread's scratch.
class ShareRunner {
 public:
  ShareRunner(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
              float* scratch)
      : outputs_(outputs), x_(x), ldx_(ldx), n_tok_(n_tok) {
    if (scratch == nullptr) {
      thread_local std::vector<float> buffer;
      buffer.resize(static_cast<size_t>(std::max<int64_t>(1, linear_share_scratch_floats(outputs, n_tok))));
      scratch = buffer.data();
    }
    bf16_scratch_ = scratch;
    qa_ = quantized_activations_in(scratch + bf16_floats(outputs, n_tok), n_tok, outputs.front().w.cols);
  }

  void run(RowPlace begin, RowPlace end) {
    for (size_t p = begin.output; p < outputs_.size() && p <= end.output; ++p) {
      const LinearOutput& o = outputs_[p];
      const int64_t r0 = p == begin.output ? begin.row : 0;
      const int64_t r1 = p == end.output ? end.row : o.w.rows;
      if (r1 <= r0) continue;
      if (is_quantized(o.w.type)) {
        if (!quant_ready_) quantize_activations(x_, ldx_, 0, n_tok_, qa_), quant_ready_ = true;
        quant_matmul_rows(o.out, o.ldo, o.w, r0, r1 - r0, qa_, n_tok_);
        if (o.bias)
          for (int64_t t = 0; t < n_tok_; ++t)
            for (int64_t r = r0; r < r1; ++r) o.out[t * o.ldo + r] += o.bias[r];
      } else if (o.w.layout == RowLayout::Paneled16) {
        bf16_panel_matmul(o.out, o.ldo, x_, ldx_, o.w, o.bias, r0, r1 - r0, n_tok_);
      } else if (o.w.type == WeightType::BF16) {
        if (!bf16_ready_)
          bf16_ = small_batch_prepare(x_, ldx_, n_tok_, o.w.cols, WeightType::BF16, bf16_scratch_),
          bf16_ready_ = true;
        small_batch_rows(o.out, o.ldo, bf16_, o.w, o.bias, r0, r1 - r0, n_tok_);
      } else {
        small_batch_rows(o.out, o.ldo, PreparedActivations{x_, ldx_}, o.w, o.bias, r0, r1 - r0, n_tok_);
      }
    }
  }

 private:
  std::span<const LinearOutput> outputs_;
  const float* x_;
  int64_t ldx_, n_tok_;
  float* bf16_scratch_ = nullptr;
  PreparedActivations bf16_;
  QuantizedActivations qa_;
  bool bf16_ready_ = false, quant_ready_ = false;
};

size_t total_bytes(std::span<const LinearOutput> outputs) {
  size_t bytes = 0;
  for (const LinearOutput& o : outputs) bytes += o.w.bytes();
  return bytes;
}

// The byte offset at which a place's row starts.
size_t byte_of(std::span<const LinearOutput> outputs, RowPlace place) {
  size_t base = 0;
  for (size_t p = 0; p < place.output && p < outputs.size(); ++p) base += outputs[p].w.bytes();
  if (place.output < outputs.size())
    base += outputs[place.output].w.row_bytes() * static_cast<size_t>(place.row);
  return base;
}

}  // namespace

void linear_share(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                  float* scratch, int id, int team) {
  if (outputs.empty() || n_tok <= 0) return;
  const size_t bytes = total_bytes(outputs), i = static_cast<size_t>(id), n = static_cast<size_t>(team);
  const RowPlace begin = boundary(outputs, bytes * i / n);
  const RowPlace end = i + 1 == n ? RowPlace{outputs.size(), 0} : boundary(outputs, bytes * (i + 1) / n);
  ShareRunner(outputs, x, ldx, n_tok, scratch).run(begin, end);
}

void linear_share_dynamic(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int team, std::atomic<size_t>& next_byte) {
  if (outputs.empty() || n_tok <= 0) return;
  const size_t bytes = total_bytes(outputs);
  ShareRunner runner(outputs, x, ldx, n_tok, scratch);
  size_t cur = next_byte.load(std::memory_order_relaxed);
  while (cur < bytes) {
    // Guided: a part of what is left, shrinking towards the end so that the threads finish together.
    const size_t want = std::max(kMinDynamicChunkBytes, (bytes - cur) / (2 * static_cast<size_t>(team)));
    const RowPlace end = boundary(outputs, std::min(bytes, cur + want));
    const size_t end_byte = end.output >= outputs.size() ? bytes : byte_of(outputs, end);
    if (!next_byte.compare_exchange_weak(cur, end_byte, std::memory_order_relaxed)) continue;  // cur reloaded
    runner.run(boundary(outputs, cur), end);
    cur = next_byte.load(std::memory_order_relaxed);
  }
}

int64_t linear_fused_scratch_floats(std::span<const LinearOutput> outputs, int64_t n_tok, int n_threads) {
  if (linear_share_applies(outputs, n_tok))
    return linear_share_scratch_floats(outputs, n_tok) * std::max(1, n_threads);
  int64_t floats = 0;
  for (const LinearOutput& o : outputs)
    floats = std::max(floats, linear_scratch_floats(o.w, n_tok, n_threads));
  return floats;
}

void linear_forward_fused(std::span<const LinearOutput> outputs, const float* x, int64_t ldx, int64_t n_tok,
                          float* scratch, int n_threads) {
  if (outputs.empty() || n_tok <= 0) return;
  if (!linear_share_applies(outputs, n_tok)) {
    for (const LinearOutput& o : outputs)
      linear_forward(o.out, o.ldo, x, ldx, o.w, o.bias, n_tok, scratch, n_threads);
    return;
  }
  int64_t total_rows = 0;
  for (const LinearOutput& o : outputs) total_rows += o.w.rows;
  const bool parallel = total_rows * outputs.front().w.cols * n_tok >= kMinParallelMultiplyAdds;
  const int64_t per_thread = linear_share_scratch_floats(outputs, n_tok);
#pragma omp parallel num_threads(n_threads) if (parallel)
  {
    const int id = omp_get_thread_num();
    linear_share(outputs, x, ldx, n_tok, scratch ? scratch + id * per_thread : nullptr, id,
                 omp_get_num_threads());
  }
}

}  // namespace gpstream::kernels
