// Tokenizer throughput: encodes every line of a text file (a .tsv contributes every column) with a
// Hugging Face tokenizer.json, single-threaded, and prints tokens/s (wall and CPU time, best of --repeat
// runs; the load time is reported apart).
//   bench_tokenizer TOKENIZER TEXT_FILE [--repeat N] [--json]
// scripts/bench-tokenizer runs it beside the Rust `tokenizers` library (via Node) on the same text.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/blas_kernels.h"
#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_tokenizer TOKENIZER TEXT_FILE [--repeat N] [--json]\n");
    return 2;
  }
  int repeat = 1;
  bool json = false;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    }
  }
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  auto tok = gpstream::tokenizer::Tokenizer::load(argv[1]);
  if (!tok.ok()) {
    std::fprintf(stderr, "bench_tokenizer: %s\n", tok.error().message().c_str());
    return 1;
  }
  double load_s = std::chrono::duration<double>(clock::now() - t0).count();

  std::FILE* f = std::fopen(argv[2], "rb");
  if (!f) {
    std::fprintf(stderr, "bench_tokenizer: cannot open %s\n", argv[2]);
    return 1;
  }
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  bool tsv = std::strlen(argv[2]) > 4 && !std::strcmp(argv[2] + std::strlen(argv[2]) - 4, ".tsv");
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    if (tsv) {
      for (size_t b = 0;;) {
        size_t tab = line.find('\t', b);
        lines.push_back(line.substr(b, tab == std::string::npos ? std::string::npos : tab - b));
        if (tab == std::string::npos) break;
        b = tab + 1;
      }
    } else {
      lines.push_back(line);
    }
    start = nl + 1;
  }

  std::vector<int32_t> ids;
  double best = 1e30, best_cpu = 1e30;
  size_t tokens = 0, bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    tokens = bytes = 0;
    auto t1 = clock::now();
    std::clock_t c1 = std::clock();
    gpstream::tokenizer::EncodeOptions o;
    for (const auto& l : lines) {
      ids.clear();
      tok->encode(l, o, ids);
      tokens += ids.size();
      bytes += l.size();
    }
    best = std::min(best, std::chrono::duration<double>(clock::now() - t1).count());
    best_cpu = std::min(best_cpu, static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC);
  }
  if (json) {
    std::printf(
        "{\"lines\": %zu, \"bytes\": %zu, \"tokens\": %zu, \"seconds\": %.4f, \"tokens_per_s\": %.0f, "
        "\"cpu_s\": %.4f, \"tokens_per_cpu_s\": %.0f, \"load_s\": %.3f}\n",
        lines.size(), bytes, tokens, best, tokens / best, best_cpu, tokens / best_cpu, load_s);
  } else {
    std::printf(
        "gpstream  %-40s %8zu lines %9zu bytes %9zu tokens  %.3f s (CPU %.3f s)  %10.0f tokens/s  "
        "(load %.2f s)\n",
        argv[1], lines.size(), bytes, tokens, best, best_cpu, tokens / best, load_s);
  }
  return 0;
}
