// bench_engine: the engine core against the machine's own limits, measured in the same run.
// A random model with Qwen2.5-0.5B's shapes (24 layers, hidden 896, 14 heads / 2 kv heads, head_dim 64,
// intermediate 4864, vocab 151936, tied, q/k/v biases) is built in memory in BF16 and in F32; for each:
//   prefill: tokens/s for a -p token prompt (one causal forward, logits for the last row), as a
//            fraction of the sgemm peak: FLOPs = 2·(params without embedding)·tokens + attention + LM head;
//   decode:  tokens/s for -n tokens fed one at a time after the prompt (KV cache, logits each step), as
//            a fraction of the bandwidth bound: weight bytes read per token ÷ memory read bandwidth, the
//            bandwidth measured again just before and after each decode run (it drifts on a shared VM).
// The peaks: OpenBLAS sgemm GFLOP/s on the prefill GEMM shapes and a streaming read over a buffer far
// larger than the caches, both with the same thread count as the engine. A per-matrix breakdown of the
// linear layers shows where the time goes, and one decode step's linears with q/k/v and gate/up as separate
// calls against fused (kernels/linear_fused.h), in alternating rounds so that both see the same machine.
//   bench_engine [-t THREADS] [-r RUNS] [-p PROMPT] [-n DECODE] [--dtype bf16|f32|both] [--json]
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "kernels/blas_kernels.h"
#include "kernels/linear.h"
#include "kernels/linear_fused.h"
#include "model/random_init.h"
#include "model/transformer.h"

namespace {

using namespace gpstream;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall time, and the process's CPU time divided by the thread count: on a shared machine the second
// leaves out the time our threads sat descheduled (exact with one thread; with several it still counts
// spinning at barriers while a peer is descheduled).
struct Watch {
  Clock::time_point w0 = Clock::now();
  double c0 = process_cpu_seconds();
  double wall() const { return seconds_since(w0); }
  double cpu(int threads) const { return (process_cpu_seconds() - c0) / threads; }
};

// A rate measured both ways.
struct Rate {
  double wall = 0, cpu = 0;
};

struct Options {
  int threads = 0;
  int runs = 3;
  int prompt = 128;
  int decode = 64;
  std::string dtype = "both";
  bool json = false;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "bench_engine: %s\nusage: bench_engine [-t THREADS] [-r RUNS] [-p PROMPT] [-n DECODE] "
               "[--dtype bf16|f32|both] [--json]\n",
               msg);
  std::exit(2);
}

int parse_positive(const char* s, const char* flag) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!end || *end || v <= 0 || v > 1 << 20) usage((std::string("bad value for ") + flag + ": " + s).c_str());
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "-t")
      o.threads = parse_positive(next(), "-t");
    else if (a == "-r")
      o.runs = parse_positive(next(), "-r");
    else if (a == "-p")
      o.prompt = parse_positive(next(), "-p");
    else if (a == "-n")
      o.decode = parse_positive(next(), "-n");
    else if (a == "--dtype") {
      o.dtype = next();
      if (o.dtype != "bf16" && o.dtype != "f32" && o.dtype != "both")
        usage("--dtype must be bf16, f32 or both");
    } else if (a == "--json")
      o.json = true;
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.threads == 0) o.threads = std::max(1, omp_get_max_threads());
  return o;
}

model::ModelConfig qwen25_05b_config() {
  model::ModelConfig c;
  c.architecture = "Qwen2ForCausalLM";
  c.model_type = "qwen2";
  c.n_vocab = 151936;
  c.n_embd = 896;
  c.n_ff = 4864;
  c.n_layer = 24;
  c.n_head = 14;
  c.n_head_kv = 2;
  c.head_dim = 64;
  c.norm_eps = 1e-6f;
  c.rope_theta = 1e6f;
  c.tie_word_embeddings = true;
  c.qkv_bias = true;
  c.max_position_embeddings = 32768;
  return c;
}

// --- machine limits ------------------------------------------------------------------------------

struct SgemmResult {
  double gflops = 0;  // best over shapes and repetitions
  std::string shape;
};

// C[M,N] = A[M,K]·B[N,K]ᵀ, the layout of linear_forward's F32 path, best of several timed batches.
Rate sgemm_gflops(int M, int N, int K, int threads) {
  std::vector<float> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(N) * K),
      c(static_cast<size_t>(M) * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 1000) * 1e-3f - 0.5f;
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f,
                c.data(), N);
  };
  call();  // warm-up: thread pool, packing buffers
  const double flops = 2.0 * M * N * K;
  Rate best;
  for (int rep = 0; rep < 5; ++rep) {
    int iters = 0;
    Watch watch;
    do {
      call();
      ++iters;
    } while (watch.wall() < 0.3);
    best.wall = std::max(best.wall, flops * iters / watch.wall() * 1e-9);
    best.cpu = std::max(best.cpu, flops * iters / watch.cpu(threads) * 1e-9);
  }
  return best;
}

// Streaming read of a buffer far larger than the last-level cache, all threads, best of several passes
// (the first pass left out). The buffer stays allocated so the bandwidth can be measured again right next
// to each decode run: on a shared VM it moves by up to 2x between minutes.
class ReadBandwidth {
 public:
  ReadBandwidth(int threads, size_t bytes) : threads_(threads), n_(bytes / sizeof(float)) {
    buf_.reset(static_cast<float*>(std::aligned_alloc(64, n_ * sizeof(float))));
    GPS_ASSERT(buf_, "bench: cannot allocate the bandwidth buffer");
    float* b = buf_.get();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < static_cast<int64_t>(n_); ++i) b[i] = 1.0f;  // first touch by the reading thread
  }

  Rate measure(int passes) {
    Rate best;
    volatile float sink = 0;
    const float* b = buf_.get();
    const size_t n = n_;
    for (int pass = 0; pass < passes; ++pass) {
      Watch watch;
      float total = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : total)
      {
        const int nt = omp_get_num_threads(), id = omp_get_thread_num();
        const size_t chunk = (n / nt) & ~size_t{31};
        const float* p = b + chunk * id;
        const size_t len = id == nt - 1 ? n - chunk * id : chunk;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        size_t i = 0;
        for (; i + 32 <= len; i += 32) {
          s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
          s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
          s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
          s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
        for (float l : lanes) total += l;
        for (; i < len; ++i) total += p[i];
      }
      const double gb = static_cast<double>(n * sizeof(float)) * 1e-9;
      const double s = watch.wall(), c = watch.cpu(threads_);
      sink = sink + total;
      if (pass > 0) {
        best.wall = std::max(best.wall, gb / s);
        best.cpu = std::max(best.cpu, gb / c);
      }
    }
    return best;
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  int threads_;
  size_t n_;
  std::unique_ptr<float[], Free> buf_;
};

// --- the model -----------------------------------------------------------------------------------

struct ModelResult {
  std::string dtype;
  double build_s = 0;
  Rate prefill_tok_s, prefill_gflops, prefill_frac;  // means over runs
  Rate decode_tok_s, decode_bound_tok_s,
      decode_frac;                      // bound and fraction: from the bandwidth around each run
  std::vector<double> decode_read_gbs;  // wall GB/s measured around each decode run
  double prefill_best_wall = 0, decode_best_wall = 0;
  double weight_bytes_per_token = 0;
  struct Part {
    std::string name;
    double prefill_ms = 0, decode_ms = 0;  // CPU time / threads, summed over layers, per forward
  };
  std::vector<Part> parts;
  double prefill_linear_ms = 0, decode_linear_ms = 0;
  // One decode step's linear layers in forward order (every layer, then the LM head), one matrix per call
  // against q/k/v and gate/up fused (kernels/linear_fused.h), rounds alternating: ms per step (means).
  Rate linears_separate_ms, linears_fused_ms;
};

// FLOPs of one causal prefill of T tokens with logits for the last row only.
double prefill_flops(const model::ModelConfig& c, int T) {
  const double E = c.n_embd, Q = double(c.n_head) * c.head_dim, KV = double(c.n_head_kv) * c.head_dim;
  const double per_layer_params = E * Q * 2 + E * KV * 2 + 3 * E * c.n_ff;
  const double linear = 2.0 * per_layer_params * c.n_layer * T;
  // QKᵀ and PV: token i sees i+1 rows; 2 FLOPs per multiply-add, head_dim per row, both products.
  const double attn = 2.0 * 2.0 * c.head_dim * c.n_head * c.n_layer * (double(T) * (T + 1) / 2);
  const double lm_head = 2.0 * E * c.n_vocab;
  return linear + attn + lm_head;
}

void run_model(const Options& o, io::DType dtype, Rate sgemm_peak, ReadBandwidth& probe, ModelResult& res) {
  const model::ModelConfig c = qwen25_05b_config();
  model::RandomInitOptions init;
  init.seed = 42;
  init.std = 0.02f;
  init.bias_std = 0.02f;
  init.dtype = dtype;
  auto t_build = Clock::now();
  io::TensorMap tensors = model::random_tensors(c, init);
  auto w = model::weights_from_tensors(c, std::move(tensors));
  GPS_ASSERT(w.ok(), "bench: random weights");
  model::Transformer tf(c, std::move(w).value(), o.threads);
  res.build_s = seconds_since(t_build);
  res.dtype = io::dtype_name(dtype);

  const int P = o.prompt, N = o.decode, T = o.threads;
  model::KvCache cache(c, P + N + 8);
  std::vector<float> logits;
  model::Batch prompt;
  for (int i = 0; i < P; ++i)
    prompt.add({.id = (i * 7919 + 13) % c.n_vocab,
                .pos = static_cast<float>(i),
                .group = model::Group::Source,
                .n_src = i + 1,
                .logits = i == P - 1});
  auto argmax = [&] {
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  };

  // Warm-up run (page faults, thread pools, workspace growth), not timed.
  auto check = [](const Status& s) { GPS_ASSERT(s.ok(), "bench: forward failed"); };
  check(tf.forward(prompt, cache, logits));
  cache.clear();

  std::vector<Rate> run_read, run_decode;
  for (int run = 0; run < o.runs; ++run) {
    cache.clear();
    Watch wp;
    check(tf.forward(prompt, cache, logits));
    const Rate prefill{P / wp.wall(), P / wp.cpu(T)};
    int32_t next = argmax();
    const Rate read_before = probe.measure(4);
    Watch wd;
    for (int i = 0; i < N; ++i) {
      model::Batch b;
      b.add({.id = next,
             .pos = static_cast<float>(P + i),
             .group = model::Group::Source,
             .n_src = P + i + 1,
             .logits = true});
      check(tf.forward(b, cache, logits));
      next = argmax();
    }
    const Rate decode{N / wd.wall(), N / wd.cpu(T)};
    const Rate read_after = probe.measure(4);
    run_read.push_back({(read_before.wall + read_after.wall) / 2, (read_before.cpu + read_after.cpu) / 2});
    run_decode.push_back(decode);
    res.prefill_tok_s.wall += prefill.wall / o.runs;
    res.prefill_tok_s.cpu += prefill.cpu / o.runs;
    res.decode_tok_s.wall += decode.wall / o.runs;
    res.decode_tok_s.cpu += decode.cpu / o.runs;
    res.prefill_best_wall = std::max(res.prefill_best_wall, prefill.wall);
    res.decode_best_wall = std::max(res.decode_best_wall, decode.wall);
    if (!o.json)
      std::fprintf(stderr,
                   "  %s run %d: prefill %.1f tok/s (cpu-time %.1f), decode %.2f tok/s (cpu-time %.2f)\n",
                   res.dtype.c_str(), run + 1, prefill.wall, prefill.cpu, decode.wall, decode.cpu);
  }
  const double flops_per_token = prefill_flops(c, P) / P;
  res.prefill_gflops = {flops_per_token * res.prefill_tok_s.wall * 1e-9,
                        flops_per_token * res.prefill_tok_s.cpu * 1e-9};
  res.prefill_frac = {res.prefill_gflops.wall / sgemm_peak.wall, res.prefill_gflops.cpu / sgemm_peak.cpu};

  // Bytes one decode step must read: every layer matrix once, the LM head (the embedding, tied) once.
  const model::Weights& W = tf.weights();
  double bytes = static_cast<double>(W.output.bytes());
  for (const auto& L : W.layers)
    for (const kernels::MatrixView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      bytes += static_cast<double>(m->bytes());
  res.weight_bytes_per_token = bytes;
  // Each run against the bandwidth measured just before and after it (mean of the two), then the mean over
  // runs.
  for (size_t r = 0; r < run_read.size(); ++r) {
    const Rate bound{run_read[r].wall * 1e9 / bytes, run_read[r].cpu * 1e9 / bytes};
    const double n = static_cast<double>(run_read.size());
    res.decode_bound_tok_s.wall += bound.wall / n;
    res.decode_bound_tok_s.cpu += bound.cpu / n;
    res.decode_frac.wall += run_decode[r].wall / bound.wall / n;
    res.decode_frac.cpu += run_decode[r].cpu / bound.cpu / n;
    res.decode_read_gbs.push_back(run_read[r].wall);
  }

  // Where the time goes: each linear of the forward, timed alone over all layers (so decode reads the
  // weights from memory as the forward does), for the prompt's n_tok and for one token.
  struct Kind {
    const char* name;
    const kernels::MatrixView* (*get)(const model::LayerWeights&);
  };
  const Kind kinds[] = {
      {"q", [](const model::LayerWeights& L) { return &L.wq; }},
      {"k", [](const model::LayerWeights& L) { return &L.wk; }},
      {"v", [](const model::LayerWeights& L) { return &L.wv; }},
      {"o", [](const model::LayerWeights& L) { return &L.wo; }},
      {"gate", [](const model::LayerWeights& L) { return &L.w_gate; }},
      {"up", [](const model::LayerWeights& L) { return &L.w_up; }},
      {"down", [](const model::LayerWeights& L) { return &L.w_down; }},
  };
  const int64_t width = std::max<int64_t>(c.n_ff, c.n_vocab);
  std::vector<float> x(static_cast<size_t>(P) * c.n_ff, 0.01f), out(static_cast<size_t>(P) * width);
  std::vector<float> scratch;
  auto time_linear = [&](const kernels::MatrixView& m, int64_t n_tok) {
    scratch.resize(static_cast<size_t>(std::max<int64_t>(1, kernels::linear_scratch_floats(m, n_tok, T))));
    Watch watch;
    kernels::linear_forward(out.data(), m.rows, x.data(), m.cols, m, nullptr, n_tok, scratch.data(), T);
    return watch.cpu(T) * 1e3;
  };
  for (const Kind& k : kinds) {
    ModelResult::Part part{k.name};
    for (int rep = 0; rep < 2; ++rep) {  // the first repetition warms up; keep the second
      part.prefill_ms = part.decode_ms = 0;
      for (const auto& L : W.layers) part.prefill_ms += time_linear(*k.get(L), P);
      for (const auto& L : W.layers) part.decode_ms += time_linear(*k.get(L), 1);
    }
    res.parts.push_back(part);
  }
  // Separate against fused linears, alternating so that both see the same machine.
  {
    const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim,
                  F = c.n_ff;
    std::vector<float> q(Q), k(KV), v(KV), gate(F), up(F), h(E), head_out(c.n_vocab);
    int64_t floats = kernels::linear_scratch_floats(W.output, 1, T);
    for (const auto& L : W.layers)
      for (const kernels::MatrixView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
        floats = std::max(floats, kernels::linear_scratch_floats(*m, 1, T));
    scratch.resize(static_cast<size_t>(std::max<int64_t>(1, floats)));
    float* sc = scratch.data();
    auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };
    auto step = [&](bool fused) {
      for (const auto& L : W.layers) {
        if (fused) {
          const kernels::LinearOutput qkv[] = {{q.data(), Q, L.wq, bias(L.bq)},
                                               {k.data(), KV, L.wk, bias(L.bk)},
                                               {v.data(), KV, L.wv, bias(L.bv)}};
          kernels::linear_forward_fused(qkv, x.data(), E, 1, sc, T);
        } else {
          kernels::linear_forward(q.data(), Q, x.data(), E, L.wq, bias(L.bq), 1, sc, T);
          kernels::linear_forward(k.data(), KV, x.data(), E, L.wk, bias(L.bk), 1, sc, T);
          kernels::linear_forward(v.data(), KV, x.data(), E, L.wv, bias(L.bv), 1, sc, T);
        }
        kernels::linear_forward(h.data(), E, x.data(), Q, L.wo, bias(L.bo), 1, sc, T);
        if (fused) {
          const kernels::LinearOutput gate_up[] = {{gate.data(), F, L.w_gate, nullptr},
                                                   {up.data(), F, L.w_up, nullptr}};
          kernels::linear_forward_fused(gate_up, x.data(), E, 1, sc, T);
        } else {
          kernels::linear_forward(gate.data(), F, x.data(), E, L.w_gate, nullptr, 1, sc, T);
          kernels::linear_forward(up.data(), F, x.data(), E, L.w_up, nullptr, 1, sc, T);
        }
        kernels::linear_forward(h.data(), E, x.data(), F, L.w_down, nullptr, 1, sc, T);
      }
      kernels::linear_forward(head_out.data(), c.n_vocab, x.data(), E, W.output, nullptr, 1, sc, T);
    };
    step(false);
    step(true);
    constexpr int kRounds = 8;
    for (int round = 0; round < kRounds; ++round)
      for (bool fused : {round % 2 == 0, round % 2 != 0}) {
        Watch watch;
        step(fused);
        Rate& r = fused ? res.linears_fused_ms : res.linears_separate_ms;
        r.wall += 1e3 * watch.wall() / kRounds;
        r.cpu += 1e3 * watch.cpu(T) / kRounds;
      }
  }
  ModelResult::Part head{"lm_head"};
  time_linear(W.output, 1);
  head.prefill_ms = time_linear(W.output, 1);  // prefill asks logits for one row too
  head.decode_ms = time_linear(W.output, 1);
  res.parts.push_back(head);
  for (const auto& p : res.parts) {
    res.prefill_linear_ms += p.prefill_ms;
    res.decode_linear_ms += p.decode_ms;
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  const Options o = parse(argc, argv);
  omp_set_num_threads(o.threads);
  openblas_set_num_threads(o.threads);  // the F32 path's sgemm uses OpenBLAS's own thread count

  const model::ModelConfig c = qwen25_05b_config();
  const int E = c.n_embd, F = c.n_ff;
  if (!o.json) std::fprintf(stderr, "measuring sgemm and memory bandwidth with %d threads...\n", o.threads);
  const Rate g_up = sgemm_gflops(o.prompt, F, E, o.threads);
  const Rate g_down = sgemm_gflops(o.prompt, E, F, o.threads);
  const Rate sgemm_peak{std::max(g_up.wall, g_down.wall), std::max(g_up.cpu, g_down.cpu)};
  ReadBandwidth probe(o.threads, size_t{1} << 30);
  const Rate bandwidth = probe.measure(6);

  std::vector<ModelResult> results;
  for (io::DType dt : {io::DType::BF16, io::DType::F32}) {
    if (o.dtype != "both" && o.dtype != (dt == io::DType::BF16 ? "bf16" : "f32")) continue;
    if (!o.json) std::fprintf(stderr, "building the %s model...\n", io::dtype_name(dt));
    results.emplace_back();
    run_model(o, dt, sgemm_peak, probe, results.back());
  }

  if (o.json) {
    auto rate = [](const char* key, Rate r) {
      std::printf("\"%s\": %.4g, \"%s_cpu\": %.4g", key, r.wall, key, r.cpu);
    };
    std::printf("{\"threads\": %d, \"runs\": %d, \"prompt\": %d, \"decode\": %d, \"params\": %zu, ",
                o.threads, o.runs, o.prompt, o.decode, c.n_params());
    rate("sgemm_gflops", sgemm_peak);
    std::printf(", ");
    rate("mem_read_gbs", bandwidth);
    std::printf(",\n \"models\": [");
    for (size_t i = 0; i < results.size(); ++i) {
      const ModelResult& r = results[i];
      std::printf("%s\n  {\"dtype\": \"%s\", ", i ? "," : "", r.dtype.c_str());
      rate("prefill_tok_s", r.prefill_tok_s);
      std::printf(", ");
      rate("prefill_gflops", r.prefill_gflops);
      std::printf(", ");
      rate("prefill_frac_sgemm", r.prefill_frac);
      std::printf(", ");
      rate("decode_tok_s", r.decode_tok_s);
      std::printf(", ");
      rate("decode_bound_tok_s", r.decode_bound_tok_s);
      std::printf(", ");
      rate("decode_frac_bandwidth", r.decode_frac);
      std::printf(", ");
      rate("decode_linears_separate_ms", r.linears_separate_ms);
      std::printf(", ");
      rate("decode_linears_fused_ms", r.linears_fused_ms);
      std::printf(", \"weight_bytes_per_token\": %.0f, \"parts_cpu_ms\": {", r.weight_bytes_per_token);
      for (size_t j = 0; j < r.parts.size(); ++j)
        std::printf("%s\"%s\": [%.3f, %.3f]", j ? ", " : "", r.parts[j].name.c_str(), r.parts[j].prefill_ms,
                    r.parts[j].decode_ms);
      std::printf("}}");
    }
    std::printf("\n ]}\n");
    return 0;
  }

  std::printf("bench_engine: Qwen2.5-0.5B shapes (%.1fM params), %d threads, prompt %d, decode %d, %d runs\n",
              c.n_params() / 1e6, o.threads, o.prompt, o.decode, o.runs);
  std::printf("(each figure: wall clock | CPU time / threads, which leaves out time spent descheduled)\n");
  std::printf(
      "machine: sgemm %.1f | %.1f GFLOP/s (best of %dx%dx%d and %dx%dx%d), memory read %.2f | %.2f GB/s\n",
      sgemm_peak.wall, sgemm_peak.cpu, o.prompt, F, E, o.prompt, E, F, bandwidth.wall, bandwidth.cpu);
  for (const ModelResult& r : results) {
    std::printf("\n%s weights (built in %.1f s)\n", r.dtype.c_str(), r.build_s);
    std::printf(
        "  prefill %4d tok: %7.1f | %7.1f tok/s (best wall %.1f)  %5.1f | %5.1f GFLOP/s = %5.1f%% | %5.1f%% "
        "of sgemm peak\n",
        o.prompt, r.prefill_tok_s.wall, r.prefill_tok_s.cpu, r.prefill_best_wall, r.prefill_gflops.wall,
        r.prefill_gflops.cpu, 100 * r.prefill_frac.wall, 100 * r.prefill_frac.cpu);
    std::printf(
        "  decode  %4d tok: %7.2f | %7.2f tok/s (best wall %.2f)  bound %.2f | %.2f tok/s (%.0f MB/token) "
        "= %5.1f%% | %5.1f%% of bound\n",
        o.decode, r.decode_tok_s.wall, r.decode_tok_s.cpu, r.decode_best_wall, r.decode_bound_tok_s.wall,
        r.decode_bound_tok_s.cpu, r.weight_bytes_per_token / 1e6, 100 * r.decode_frac.wall,
        100 * r.decode_frac.cpu);
    std::printf("  (bound: memory read measured just before and after each decode run:");
    for (double g : r.decode_read_gbs) std::printf(" %.1f", g);
    std::printf(" GB/s; %% of bound: mean over runs)\n");
    std::printf("  linear layers alone, CPU ms / threads per forward (all layers):  prefill    decode\n");
    for (const auto& p : r.parts)
      std::printf("    %-8s %52.2f %9.3f\n", p.name.c_str(), p.prefill_ms, p.decode_ms);
    std::printf("    %-8s %52.2f %9.3f\n", "sum", r.prefill_linear_ms, r.decode_linear_ms);
    std::printf("    %-8s %52.2f %9.3f\n", "forward", 1e3 * o.prompt / r.prefill_tok_s.cpu,
                1e3 / r.decode_tok_s.cpu);
    auto gbs = [&](double ms) { return r.weight_bytes_per_token / ms * 1e-6; };
    std::printf(
        "  one decode step's linears, alternating rounds: separate %.2f | %.2f ms (%.1f | %.1f GB/s), "
        "q/k/v + gate/up fused %.2f | %.2f ms (%.1f | %.1f GB/s)\n",
        r.linears_separate_ms.wall, r.linears_separate_ms.cpu, gbs(r.linears_separate_ms.wall),
        gbs(r.linears_separate_ms.cpu), r.linears_fused_ms.wall, r.linears_fused_ms.cpu,
        gbs(r.linears_fused_ms.wall), gbs(r.linears_fused_ms.cpu));
  }
  return 0;
}
