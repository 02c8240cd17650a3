// Training throughput: tokens/s and model FLOP utilisation of one optimizer step (forward, backward,
// clipping, AdamW) for a ~9M-parameter llama-style model at sequence 128, batch 16, against the sgemm
// peak measured in the same run. `bench_train [--seq T] [--batch B] [--steps N] [--threads N]
// [--embd E --layers L --heads H --kv-heads K --ff F --vocab V]`.
#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/blas_kernels.h"
#include "model/random_init.h"
#include "train/optimizer.h"
#include "train/train_model.h"

using namespace gpstream;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// sgemm GFLOP/s on the square-ish shapes a training step uses.
double sgemm_peak(int n_threads) {
  const int M = 2048, N = 768, K = 256;
  std::vector<float> a(size_t(M) * K, 0.01f), b(size_t(K) * N, 0.02f), c(size_t(M) * N);
  (void)n_threads;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f,
              c.data(), N);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now();
    for (int i = 0; i < 10; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f,
                  c.data(), N);
    const double dt = now() - t0;
    best = std::max(best, 10.0 * 2.0 * M * N * K / dt / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  int T = 128, B = 16, steps = 10, threads = 2;
  model::ModelConfig c;
  c.n_vocab = 8000;
  c.n_embd = 256;
  c.n_layer = 8;
  c.n_head = 8;
  c.n_head_kv = 4;
  c.head_dim = 32;
  c.n_ff = 768;
  c.tie_word_embeddings = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--seq")
      T = v;
    else if (a == "--batch")
      B = v;
    else if (a == "--steps")
      steps = v;
    else if (a == "--threads")
      threads = v;
    else if (a == "--embd")
      c.n_embd = v;
    else if (a == "--layers")
      c.n_layer = v;
    else if (a == "--heads")
      c.n_head = v;
    else if (a == "--kv-heads")
      c.n_head_kv = v;
    else if (a == "--ff")
      c.n_ff = v;
    else if (a == "--vocab")
      c.n_vocab = v;
    else {
      std::fprintf(stderr, "bench_train: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  c.head_dim = c.n_embd / c.n_head;
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  model::RandomInitOptions ro;
  auto model =
      train::TrainModel::create(c, model::random_tensors(c, ro), {}, 0, {int64_t(T) * B, T}, threads);
  if (!model.ok()) {
    std::fprintf(stderr, "bench_train: %s\n", model.error().message().c_str());
    return 1;
  }
  auto& m = **model;
  train::AdamW opt(m.trainable().size(), {});
  std::mt19937 rng(1);
  train::TrainBatch batch;
  for (int s = 0; s < B; ++s) {
    train::TrainSequence q;
    for (int i = 0; i < T; ++i)
      q.push(int32_t(rng() % c.n_vocab), float(i), 0, i + 1, 0, int32_t(rng() % c.n_vocab));
    batch.seqs.push_back(q);
  }
  const double peak = sgemm_peak(threads);
  double fwd = 0, bwd = 0, upd = 0, best = 1e300;
  for (int step = -1; step < steps; ++step) {  // step -1: warm-up
    const double t0 = now();
    auto l = m.forward(batch);
    const double t1 = now();
    m.zero_grad();
    m.backward(1.0f / float(batch.n_labels()));
    const double t2 = now();
    train::clip_grad_norm(m.grads(), 1.0);
    opt.step(m.trainable(), m.grads(), 1e-3f, threads);
    const double t3 = now();
    if (step >= 0) fwd += t1 - t0, bwd += t2 - t1, upd += t3 - t2, best = std::min(best, t3 - t0);
    if (!l.ok()) return 1;
  }
  const double per_step = (fwd + bwd + upd) / steps;
  const double tok_s = double(batch.n_tokens()) / per_step;
  const double gflops = m.step_flops(batch) / per_step / 1e9;
  std::printf("model: %zu parameters (vocab %d, embd %d, layers %d, heads %d/%d, ff %d, tied)\n",
              c.n_params(), c.n_vocab, c.n_embd, c.n_layer, c.n_head, c.n_head_kv, c.n_ff);
  std::printf("batch %d x seq %d, %d threads, %d steps\n", B, T, threads, steps);
  std::printf("sgemm peak: %.1f GFLOP/s\n", peak);
  std::printf("step: %.1f ms (forward %.1f, backward %.1f, clip+AdamW %.1f)\n", per_step * 1e3,
              fwd / steps * 1e3, bwd / steps * 1e3, upd / steps * 1e3);
  std::printf("throughput: %.0f tokens/s, %.1f GFLOP/s model = %.0f%% of sgemm peak\n", tok_s, gflops,
              100.0 * gflops / peak);
  std::printf("best step: %.0f tokens/s (%.0f%% of sgemm peak)\n", double(batch.n_tokens()) / best,
              100.0 * m.step_flops(batch) / best / 1e9 / peak);
  return 0;
}
