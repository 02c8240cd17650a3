// bench_gguf: prefill and decode speed of a GGUF model, measured the way llama-bench measures (so
// scripts/bench-llamacpp can put the two side by side on the same file):
//   prefill: a -p token prompt of random ids in one forward pass into an empty KV cache (logits for the last
//            row), tokens/s = p / time;
//   decode:  -n tokens fed one at a time into an empty KV cache, logits each step, tokens/s = n / time;
// one warm-up run of each, then -r repetitions; reports the mean tokens/s (llama-bench's avg_ts) and each
// run.
//   bench_gguf MODEL.gguf [-t THREADS] [-p PROMPT] [-n DECODE] [-r REPS] [--json]
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
#include "model/transformer.h"

namespace {

using namespace gpstream;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  int threads = 1, prompt = 128, decode = 64, reps = 5;
  bool json = false;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: bench_gguf MODEL.gguf [-t THREADS] [-p PROMPT] [-n DECODE] [-r REPS] [--json]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() {
      if (i + 1 >= argc) usage();
      const int v = std::atoi(argv[++i]);
      if (v < 0) usage();
      return v;
    };
    if (a == "-t")
      o.threads = value();
    else if (a == "-p")
      o.prompt = value();
    else if (a == "-n")
      o.decode = value();
    else if (a == "-r")
      o.reps = value();
    else if (a == "--json")
      o.json = true;
    else if (!a.empty() && a[0] != '-' && o.model.empty())
      o.model = a;
    else
      usage();
  }
  if (o.model.empty() || o.threads < 1 || o.reps < 1) usage();
  return o;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Tokens/s of one prefill (p tokens, one batch) or one decode (n single-token steps).
double run_once(model::Transformer& tf, const std::vector<int32_t>& ids, bool prefill) {
  model::KvCache cache(tf.config(), static_cast<int>(ids.size()) + 1);
  std::vector<float> logits;
  const auto t0 = Clock::now();
  if (prefill) {
    model::Batch b;
    for (size_t i = 0; i < ids.size(); ++i)
      b.add({.id = ids[i],
             .pos = static_cast<float>(i),
             .group = model::Group::Source,
             .n_src = static_cast<int>(i) + 1,
             .logits = i + 1 == ids.size()});
    if (Status s = tf.forward(b, cache, logits); !s.ok()) {
      std::fprintf(stderr, "bench_gguf: %s\n", s.error().message().c_str());
      std::exit(1);
    }
  } else {
    for (size_t i = 0; i < ids.size(); ++i) {
      model::Batch b;
      b.add({.id = ids[i],
             .pos = static_cast<float>(i),
             .group = model::Group::Source,
             .n_src = static_cast<int>(i) + 1,
             .logits = true});
      if (Status s = tf.forward(b, cache, logits); !s.ok()) {
        std::fprintf(stderr, "bench_gguf: %s\n", s.error().message().c_str());
        std::exit(1);
      }
    }
  }
  return static_cast<double>(ids.size()) / seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  const Options o = parse(argc, argv);
  // One OpenMP pool for gpstream's kernels and OpenBLAS (its OpenMP build): never more threads than asked.
  omp_set_num_threads(o.threads);
  openblas_set_num_threads(o.threads);
  auto tf = model::Transformer::load(o.model, o.threads);
  if (!tf.ok()) {
    std::fprintf(stderr, "bench_gguf: %s\n", tf.error().message().c_str());
    return 1;
  }
  std::mt19937 rng(1);
  auto random_ids = [&](int n) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto& id : ids) id = static_cast<int32_t>(rng() % static_cast<uint32_t>((*tf)->config().n_vocab));
    return ids;
  };
  std::vector<double> pp, tg;
  for (int phase = 0; phase < 2; ++phase) {
    const bool prefill = phase == 0;
    const int n = prefill ? o.prompt : o.decode;
    if (n == 0) continue;
    run_once(**tf, random_ids(n), prefill);  // warm-up (page in the weights, size the workspaces)
    for (int r = 0; r < o.reps; ++r) (prefill ? pp : tg).push_back(run_once(**tf, random_ids(n), prefill));
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  auto list = [](const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  if (o.json) {
    std::printf(
        "{\"model\": \"%s\", \"threads\": %d, \"prompt\": %d, \"decode\": %d, \"reps\": %d, "
        "\"prefill_tps\": %.4f, \"decode_tps\": %.4f, \"prefill_runs\": %s, \"decode_runs\": %s}\n",
        o.model.c_str(), o.threads, o.prompt, o.decode, o.reps, mean(pp), mean(tg), list(pp).c_str(),
        list(tg).c_str());
  } else {
    std::printf("%s: threads %d, prefill %d tokens: %.2f tok/s, decode %d tokens: %.2f tok/s (mean of %d)\n",
                o.model.c_str(), o.threads, o.prompt, mean(pp), o.decode, mean(tg), o.reps);
  }
  return 0;
}
