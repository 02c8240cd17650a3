// bench_bleu: corpus BLEU (sacreBLEU 13a by default) over N sentence pairs taken from the target
// side (column 2) of TSV files, hypotheses = the same references shuffled with a fixed seed, so
// every n-gram order has partial matches. Prints the time of each stage and the total.
//   bench_bleu [-n 100000] [--tokenize 13a|intl|char|none] [-r RUNS] FILE.tsv...
// Lines are reused cyclically if the files hold fewer than N pairs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "eval/bleu.h"
#include "kernels/blas_kernels.h"

using namespace gpstream;

static double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  size_t n = 100000;
  int runs = 3;
  std::string tok_name = "13a";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-n") && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "-r") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--tokenize") && i + 1 < argc) {
      tok_name = argv[++i];
    } else {
      files.emplace_back(argv[i]);
    }
  }
  auto tok = eval::parse_tokenizer(tok_name);
  if (files.empty() || n == 0 || runs < 1 || !tok.ok()) {
    std::fprintf(stderr, "usage: bench_bleu [-n N] [-r RUNS] [--tokenize 13a|intl|char|none] FILE.tsv...\n");
    return 2;
  }
  std::vector<std::string> pool;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "bench_bleu: cannot open %s\n", f.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(in, line)) {
      const size_t tab = line.find('\t');
      if (tab != std::string::npos && tab + 1 < line.size()) pool.push_back(line.substr(tab + 1));
    }
  }
  if (pool.empty()) {
    std::fprintf(stderr, "bench_bleu: no tab-separated pairs found\n");
    return 1;
  }
  std::vector<std::vector<std::string>> refs(1);
  for (size_t i = 0; i < n; ++i) refs[0].push_back(pool[i % pool.size()]);
  std::vector<std::string> hyps = refs[0];
  std::mt19937_64 rng(12345);
  // Shuffle within windows of 8 lines: hypotheses stay similar enough to share n-grams.
  for (size_t i = 0; i + 8 <= hyps.size(); i += 8) std::shuffle(hyps.begin() + i, hyps.begin() + i + 8, rng);
  size_t bytes = 0;
  for (const auto& h : hyps) bytes += h.size();

  eval::BleuOptions o;
  o.tokenize = *tok;
  double best = 1e30, best_cpu = 1e30;
  eval::BleuResult result;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    auto res = eval::corpus_bleu(hyps, refs, o);
    const double c1 = cpu_seconds();
    const auto t1 = std::chrono::steady_clock::now();
    best_cpu = std::min(best_cpu, c1 - c0);
    if (!res.ok()) {
      std::fprintf(stderr, "bench_bleu: %s\n", res.error().message().c_str());
      return 1;
    }
    result = *res;
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  std::printf("pairs=%zu hyp_bytes=%zu tokenize=%s runs=%d\n", n, bytes, tok_name.c_str(), runs);
  std::printf("%s\n",
              eval::format_bleu_line(result.score, eval::bleu_signature(o, result.num_refs), 2).c_str());
  std::printf("best_seconds=%.3f cpu_seconds(all threads)=%.3f pairs_per_second=%.0f\n", best, best_cpu,
              static_cast<double>(n) / best);
  return best < 1.0 ? 0 : 3;
}
