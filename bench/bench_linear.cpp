// bench_linear: the linear layer's few-token kernel against its tiled-sgemm path (and, for BF16, the panel
// micro-kernel), per number of tokens, on one of Qwen2.5-0.5B's MLP matrices (4864 x 896, BF16 by default) —
// the measurement behind the small-batch threshold in kernels/linear.cpp and the BF16 panels. For each n_tok:
// GFLOP/s of
//   small:  kernels::small_batch_rows over all rows (each row widened once per four tokens),
//   tiled:  kernels::linear_forward_tiled (64-row tiles widened to fp32, then sgemm; F32: one sgemm),
//   panels: BF16 with rows % 16 == 0: the matrix in 16-row panels (kernels/bf16_panels.h), linear_forward,
// all single-threaded by default (-t splits rows over threads as linear_forward does), best of -r runs.
// With --dtype q8_0 or q4_0 the matrix is quantized and interleaved in groups of eight rows as the model
// stores it (kernels/quant_dot.h), and one column times linear_forward (activations quantized included),
// in GFLOP/s-equivalent (2 x rows x cols x tokens).
//   bench_linear [-t THREADS] [-r RUNS] [--dtype bf16|f16|f32|q8_0|q4_0] [--rows 4864] [--cols 896]
//                [--tokens 1,2,4,8,16,32]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/bf16_panels.h"
#include "kernels/blas_kernels.h"
#include "kernels/linear.h"
#include "kernels/linear_small_batch.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_dot.h"
#include "util/half.h"
#include "util/huge_page_buffer.h"

namespace {

using namespace gpstream;
using Clock = std::chrono::steady_clock;

double best_seconds(int runs, const auto& fn) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

// --dtype q8_0 / q4_0: the interleaved int8 kernels through linear_forward.
int bench_quantized(const std::string& dtype, int64_t rows, int64_t cols, const std::vector<int>& tokens,
                    int threads, int runs) {
  const bool q8 = dtype == "q8_0";
  if (rows % kernels::kInterleaveRows != 0 || cols % 32 != 0)
    return std::fprintf(stderr, "bench_linear: %s needs rows %% 8 == 0 and cols %% 32 == 0\n", dtype.c_str()),
           2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> f32(static_cast<size_t>(rows * cols));
  for (float& v : f32) v = dist(rng);
  const size_t row_bytes = static_cast<size_t>(cols / 32) * (q8 ? kernels::kQ8_0Bytes : kernels::kQ4_0Bytes);
  std::vector<uint8_t> plain(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    void* dst = plain.data() + static_cast<size_t>(r) * row_bytes;
    if (q8)
      kernels::quantize_row_q8_0(f32.data() + r * cols, static_cast<kernels::BlockQ8_0*>(dst), cols);
    else
      kernels::quantize_row_q4_0(f32.data() + r * cols, static_cast<kernels::BlockQ4_0*>(dst), cols);
  }
  kernels::MatrixView w;
  w.data = plain.data();
  w.type = q8 ? kernels::WeightType::Q8_0 : kernels::WeightType::Q4_0;
  w.rows = rows;
  w.cols = cols;
  auto buffer = HugePageBuffer::allocate(plain.size(), "interleaved rows");
  if (!buffer) return std::fprintf(stderr, "%s\n", buffer.error().message().c_str()), 1;
  kernels::interleave_quantized_rows(w, buffer->data());
  w.data = buffer->data();
  w.layout = kernels::RowLayout::Interleaved8;
  kernels::set_blas_threads(threads);
  std::printf(
      "bench_linear: %lld x %lld %s (rows interleaved by eight), %d thread(s), best of %d; "
      "GFLOP/s-equivalent\n",
      static_cast<long long>(rows), static_cast<long long>(cols), dtype.c_str(), threads, runs);
  std::printf("%6s %12s\n", "n_tok", "interleaved");
  const int max_tok = *std::max_element(tokens.begin(), tokens.end());
  std::vector<float> x(static_cast<size_t>(max_tok * cols)), out(static_cast<size_t>(max_tok * rows));
  for (auto& v : x) v = dist(rng);
  for (int n_tok : tokens) {
    const int64_t scratch_floats = kernels::linear_scratch_floats(w, n_tok, threads);
    std::vector<float> scratch(static_cast<size_t>(std::max<int64_t>(1, scratch_floats)));
    const double s = best_seconds(runs, [&] {
      kernels::linear_forward(out.data(), rows, x.data(), cols, w, nullptr, n_tok, scratch.data(), threads);
    });
    std::printf("%6d %12.1f\n", n_tok, 2.0 * static_cast<double>(rows * cols) * n_tok / s * 1e-9);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  int threads = 1, runs = 5;
  int64_t rows = 4864, cols = 896;
  std::string dtype = "bf16";
  std::vector<int> tokens = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "-t" && has)
      threads = std::atoi(argv[++i]);
    else if (a == "-r" && has)
      runs = std::atoi(argv[++i]);
    else if (a == "--dtype" && has)
      dtype = argv[++i];
    else if (a == "--rows" && has)
      rows = std::atoll(argv[++i]);
    else if (a == "--cols" && has)
      cols = std::atoll(argv[++i]);
    else if (a == "--tokens" && has)
      tokens = parse_list(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: bench_linear [-t THREADS] [-r RUNS] [--dtype bf16|f16|f32|q8_0|q4_0] [--rows N] "
                   "[--cols N] [--tokens 1,2,4,8]\n");
      return 2;
    }
  }
  if (dtype == "q8_0" || dtype == "q4_0") return bench_quantized(dtype, rows, cols, tokens, threads, runs);
  const kernels::WeightType type = dtype == "f32"   ? kernels::WeightType::F32
                                   : dtype == "f16" ? kernels::WeightType::F16
                                                    : kernels::WeightType::BF16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t elem = type == kernels::WeightType::F32 ? 4 : 2;
  std::vector<uint8_t> weights(static_cast<size_t>(rows * cols) * elem);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = dist(rng);
    if (type == kernels::WeightType::F32)
      std::memcpy(&weights[i * 4], &v, 4);
    else {
      const uint16_t h = type == kernels::WeightType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
      std::memcpy(&weights[i * 2], &h, 2);
    }
  }
  kernels::MatrixView w;
  w.data = weights.data();
  w.type = type;
  w.rows = rows;
  w.cols = cols;
  kernels::set_blas_threads(threads);
  std::printf("bench_linear: %lld x %lld %s, %d thread(s), best of %d; GFLOP/s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), dtype.c_str(), threads, runs);
  // In 2 MiB pages, as model/weight_repack stores them (4 KiB pages cost the two-thread, larger-than-cache
  // runs TLB misses the model does not have).
  HugePageBuffer panel_bytes;
  kernels::MatrixView panels;
  if (kernels::can_panel_bf16(w)) {
    auto buffer = HugePageBuffer::allocate(weights.size(), "panels");
    if (!buffer) return std::fprintf(stderr, "%s\n", buffer.error().message().c_str()), 1;
    panel_bytes = std::move(buffer).value();
    kernels::panel_bf16_rows(w, panel_bytes.data());
    panels = w;
    panels.data = panel_bytes.data();
    panels.layout = kernels::RowLayout::Paneled16;
  }
  std::printf("%6s %10s %10s %11s %10s %12s\n", "n_tok", "small", "tiled", "small/tiled", "panels",
              "panels/tiled");
  const int max_tok = *std::max_element(tokens.begin(), tokens.end());
  std::vector<float> x(static_cast<size_t>(max_tok * cols)), out(static_cast<size_t>(max_tok * rows));
  for (auto& v : x) v = dist(rng);
  for (int n_tok : tokens) {
    const double flops = 2.0 * static_cast<double>(rows * cols) * n_tok;
    std::vector<float> prepared(static_cast<size_t>(kernels::small_batch_scratch_floats(type, n_tok, cols)));
    const double small = best_seconds(runs, [&] {
      const kernels::PreparedActivations xp =
          kernels::small_batch_prepare(x.data(), cols, n_tok, cols, type, prepared.data());
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t r0 = 0; r0 < rows; r0 += 16)
        kernels::small_batch_rows(out.data(), rows, xp, w, nullptr, r0, std::min<int64_t>(16, rows - r0),
                                  n_tok);
    });
    std::vector<float> scratch(
        static_cast<size_t>(std::max<int64_t>(1, kernels::linear_tiled_scratch_floats(w, threads))));
    const double tiled = best_seconds(runs, [&] {
      kernels::linear_forward_tiled(out.data(), rows, x.data(), cols, w, nullptr, n_tok, scratch.data(),
                                    threads);
    });
    std::printf("%6d %10.1f %10.1f %10.2fx", n_tok, flops / small * 1e-9, flops / tiled * 1e-9,
                tiled / small);
    if (panels.layout == kernels::RowLayout::Paneled16) {
      const double paneled = best_seconds(runs, [&] {
        kernels::linear_forward(out.data(), rows, x.data(), cols, panels, nullptr, n_tok, nullptr, threads);
      });
      std::printf(" %10.1f %11.2fx", flops / paneled * 1e-9, tiled / paneled);
    }
    std::printf("\n");
  }
  return 0;
}
