// Streaming benchmarks (docs/performance.md):
//  paradigms: forced decoding (target tokens from the reference, so every paradigm does identical
//             work) over en-fr dev sentences at wait-5 and wait-9: group vs reencode vs interleaved,
//             time per sentence, ratios, cost per source word, and rows forwarded (prompt, source, target,
//             re-feeds and recomputed rows);
//  scheduler: aggregate target tokens/s (the tokens written: the reference's and the end marker; re-fed and
//             template rows not counted) with 1, 4, 16 and 64 concurrent sessions, each taking the next
//             sentence of one queue when it finishes (a closed loop), the prompt's rows copied from a
//             PromptCache (--no-prompt-cache: every session forwards its prompt); --repeat R runs the levels
//             R times in turn and prints the median ratio of each level to the first.
// --isa avx2,avx512 runs each mode's table once with each instruction set of the kernels (kernels/cpu_isa.h)
// in one process.
// The model is random with Qwen2.5-0.5B's shapes (or --small for a quick run), stored in BF16 (--dtype: the
// storage types of `gpstream convert --type`); the tokenizer is the Qwen fixture. Usage:
//   bench_stream [--small] [-n SENTENCES] [-t THREADS] [--mode paradigms|scheduler|all] [--sessions
//   1,4,16,64]
//                [--repeat R] [--no-prompt-cache] [--dtype bf16|f32|f16|q8_0|q4_0] [--isa avx2,avx512]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eval/simultaneous.h"
#include "kernels/blas_kernels.h"
#include "kernels/cpu_isa.h"
#include "model/quantize_model.h"
#include "model/random_init.h"
#include "model/transformer.h"
#include "stream/scheduler.h"
#include "stream/tokenizer_codec.h"

using namespace gpstream;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

model::ModelConfig shape(bool small, int n_vocab) {
  model::ModelConfig c;
  c.architecture = "Qwen2ForCausalLM";
  c.model_type = "qwen2";
  c.qkv_bias = true;
  c.tie_word_embeddings = true;
  c.n_vocab = n_vocab;
  c.rope_theta = 1e6f;
  if (small) {
    c.n_embd = 256, c.n_ff = 704, c.n_layer = 4, c.n_head = 4, c.n_head_kv = 2, c.head_dim = 64;
  } else {
    c.n_embd = 896, c.n_ff = 4864, c.n_layer = 24, c.n_head = 14, c.n_head_kv = 2, c.head_dim = 64;
  }
  return c;
}

std::vector<int32_t> target_tokens(const stream::SegmentCodec& codec, const std::string& text) {
  std::vector<int32_t> ids;
  bool first = true;
  std::string w;
  for (char ch : text + " ") {
    if (ch == ' ') {
      if (!w.empty()) {
        auto r = codec.encode(stream::SegmentKind::TargetWord, w, first);
        ids.insert(ids.end(), r->begin(), r->end());
        first = false;
      }
      w.clear();
    } else {
      w += ch;
    }
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::kernels::use_fast_blas_kernels(argv);
  bool small = false, prompt_cache = true;
  int n = 100, threads = 2, repeat = 1;
  std::string mode = "all", storage = "bf16";
  std::vector<int> session_counts = {1, 4, 16, 64};
  std::vector<kernels::Isa> isas = {kernels::kernel_isa()};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--small")
      small = true;
    else if (a == "--no-prompt-cache")
      prompt_cache = false;
    else if (a == "-n" && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else if (a == "-t" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--mode" && i + 1 < argc)
      mode = argv[++i];
    else if (a == "--dtype" && i + 1 < argc)
      storage = argv[++i];
    else if (a == "--sessions" && i + 1 < argc) {
      session_counts.clear();
      for (char* p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ","))
        session_counts.push_back(std::atoi(p));
    } else if (a == "--isa" && i + 1 < argc) {
      isas.clear();
      for (char* p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ",")) {
        const std::string v = p;
        if (v != "avx2" && v != "avx512")
          return std::fprintf(stderr, "--isa: avx2 or avx512, not %s\n", p), 2;
        const kernels::Isa isa = v == "avx2" ? kernels::Isa::Avx2 : kernels::Isa::Avx512;
        if (isa == kernels::Isa::Avx512 && !kernels::cpu_has_avx512())
          return std::fprintf(stderr, "--isa avx512: this CPU has no AVX-512F\n"), 2;
        isas.push_back(isa);
      }
    } else {
      std::fprintf(stderr,
                   "usage: bench_stream [--small] [-n N] [-t THREADS] [--mode paradigms|scheduler|all] "
                   "[--sessions 1,4,16,64] [--repeat R] [--no-prompt-cache] [--dtype bf16|f32|f16|q8_0|q4_0] "
                   "[--isa avx2,avx512]\n");
      return 2;
    }
  }
  const std::string root = GPSTREAM_SOURCE_DIR_STR;
  auto tok = tokenizer::Tokenizer::load(root + "/../shared/fixtures/tokenizers/qwen3");
  if (!tok) return std::fprintf(stderr, "%s\n", tok.error().message().c_str()), 1;
  auto tokp = std::make_shared<const tokenizer::Tokenizer>(std::move(tok).value());
  stream::TokenizerCodec codec(tokp,
                               tokenizer::Template::builtin("qwen")->with_languages("English", "French"));
  auto cfg = shape(small, 151936);
  model::RandomInitOptions ro;
  ro.dtype = storage == "bf16" ? io::DType::BF16 : io::DType::F32;
  io::TensorMap tensors = model::random_tensors(cfg, ro);
  if (storage != "bf16") {
    auto type = model::parse_storage_type(storage);
    if (!type) return std::fprintf(stderr, "%s\n", type.error().message().c_str()), 2;
    tensors = model::convert_model_tensors(cfg, tensors, *type);
  }
  auto w = model::weights_from_tensors(cfg, std::move(tensors));
  if (!w) return std::fprintf(stderr, "%s\n", w.error().message().c_str()), 1;
  model::Transformer tf(cfg, std::move(w).value(), threads);
  auto pairs = eval::read_test_tsv(root + "/data/corpus/en-fr.dev.tsv");
  if (!pairs) return std::fprintf(stderr, "%s\n", pairs.error().message().c_str()), 1;
  if (static_cast<int>(pairs->size()) > n) pairs->resize(n);
  std::printf("model: %s shapes, %s, %zu params; %zu en-fr dev sentences; %d threads\n",
              small ? "small (4x256)" : "Qwen2.5-0.5B", storage.c_str(), cfg.n_params(), pairs->size(),
              threads);

  if (mode == "paradigms" || mode == "all") {
    size_t src_words = 0;
    for (const auto& p : *pairs) {
      size_t c = 0;
      bool in = false;
      for (char ch : p.source) c += (ch != ' ' && !in), in = ch != ' ';
      src_words += c;
    }
    for (kernels::Isa isa : isas) {
      kernels::set_kernel_isa(isa);
      std::printf("\nkernels: %s\n%-12s %3s %12s %14s %12s %10s\n",
                  std::string(kernels::isa_name(isa)).c_str(), "paradigm", "k", "s/sentence",
                  "ms/source word", "rows fwd", "vs group");
      for (int k : {5, 9}) {
        double group_time = 0;
        for (auto p : {stream::Paradigm::Group, stream::Paradigm::Reencode, stream::Paradigm::Interleaved}) {
          const int64_t before = tf.tokens_forwarded();
          const double t0 = now_s();
          for (const auto& pair : *pairs) {
            stream::SessionOptions so;
            so.paradigm = p;
            so.k = k;
            so.forced_target = target_tokens(codec, pair.reference);
            so.max_target_tokens = static_cast<int>(so.forced_target->size()) + 1;
            eval::SimultaneousOptions one_sentence;  // the forced reference is one sentence's target
            one_sentence.read_whole_line = false;
            auto r = eval::evaluate_sentence(tf, codec, so, pair, one_sentence);
            if (!r) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
          }
          const double dt = now_s() - t0;
          if (p == stream::Paradigm::Group) group_time = dt;
          std::printf("%-12s %3d %12.3f %14.2f %12lld %9.2fx\n", stream::paradigm_name(p), k,
                      dt / pairs->size(), 1000 * dt / src_words,
                      static_cast<long long>(tf.tokens_forwarded() - before), dt / group_time);
          std::fflush(stdout);
        }
      }
    }
  }
  if (mode == "scheduler" || mode == "all") {
    // Closed loop: N slots, each taking the next sentence of the same queue (every dev sentence read) when
    // its session finishes, so every concurrency level does the same work and sessions join and leave
    // mid-run as on a server. "tail" is the share of the time after the queue ran dry, when fewer than N
    // sessions were left. "steady" counts only the time before the queue ran dry, when all N slots were
    // busy: the tokens of the sentences finished by then plus those the running sessions had written.
    std::shared_ptr<const stream::PromptCache> cache;
    if (prompt_cache) {
      auto built = stream::PromptCache::build(tf, codec);
      if (!built) return std::fprintf(stderr, "%s\n", built.error().message().c_str()), 1;
      cache = std::move(built).value();
    }
    std::printf("\n%d sentences per run, wait-5, forced decoding, prompt rows %s\n",
                static_cast<int>(pairs->size()),
                cache ? "copied from a PromptCache" : "forwarded by every session");
    // Levels: every session count with each instruction set asked for, in that order.
    std::vector<std::pair<int, kernels::Isa>> levels;
    for (kernels::Isa isa : isas)
      for (int ns : session_counts) levels.emplace_back(ns, isa);
    std::printf("%-9s %-7s %14s %8s %14s %8s %9s %14s %8s %9s %10s\n", "sessions", "isa", "target tok/s",
                "vs 1", "steady tok/s", "vs 1", "forwards", "rows/forward", "tail", "seconds", "tokens");
    // Each round runs every level once, "vs 1" against that round's first level; with --repeat the
    // rounds alternate so that a slow spell of the shared machine hits both sides of a ratio.
    std::vector<std::vector<double>> ratios(levels.size());
    for (int rep = 0; rep < repeat; ++rep) {
      double base = 0, steady_base = 0;
      for (size_t level = 0; level < levels.size(); ++level) {
        const int ns = levels[level].first;
        kernels::set_kernel_isa(levels[level].second);
        stream::Scheduler sched(tf);
        std::vector<std::unique_ptr<stream::Session>> live(static_cast<size_t>(ns));
        std::vector<int> handle_slot;
        size_t next = 0;
        int64_t tgt = 0, forwards = 0;
        auto start = [&](size_t slot) -> bool {
          if (next >= pairs->size()) return false;
          const auto& pair = (*pairs)[next++];
          stream::SessionOptions so;
          so.k = 5;
          so.forced_target = target_tokens(codec, pair.reference);
          so.max_target_tokens = static_cast<int>(so.forced_target->size()) + 1;
          so.prompt_cache = cache;
          live[slot] = std::move(stream::Session::create(tf, codec, so)).value();
          (void)live[slot]->push_source(pair.source);
          (void)live[slot]->end_source();
          const int h = sched.add(live[slot].get());
          if (static_cast<int>(handle_slot.size()) <= h) handle_slot.resize(static_cast<size_t>(h) + 1, -1);
          handle_slot[static_cast<size_t>(h)] = static_cast<int>(slot);
          return true;
        };
        for (int i = 0; i < ns; ++i) start(static_cast<size_t>(i));
        const int64_t rows_before = tf.tokens_forwarded();
        const double t0 = now_s();
        double dry_at = next >= pairs->size() ? t0 : 0;
        int64_t steady_tgt = 0;  // tokens written by the time the queue ran dry
        bool steady_counted = false;
        // Tokens a running session has written: its target rows labelled with the token chosen from them.
        auto written = [](const stream::Session& s) {
          int64_t c = 0;
          for (int32_t y : s.target_row_labels()) c += y >= 0;
          return c;
        };
        std::vector<int> finished;
        for (;;) {
          finished.clear();
          auto r = sched.round([&](int h, const stream::Event& e) {
            if (e.kind == stream::EventKind::Finished) finished.push_back(h);
          });
          if (!r) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
          if (*r == 0 && finished.empty()) break;
          forwards += *r > 0;
          for (int h : finished) {
            const auto slot = static_cast<size_t>(handle_slot[static_cast<size_t>(h)]);
            tgt += static_cast<int64_t>(live[slot]->options().forced_target->size()) + 1;  // + the end marker
            sched.remove(h);
            if (!start(slot) && dry_at == 0) dry_at = now_s();
          }
          if (dry_at > 0 && !steady_counted) {
            steady_counted = true;
            steady_tgt = tgt;
            for (const auto& s : live)
              if (s && !s->finished()) steady_tgt += written(*s);
          }
        }
        const double t1 = now_s(), dt = t1 - t0;
        const double tps = static_cast<double>(tgt) / dt;
        const double steady_tps = dry_at > t0 ? static_cast<double>(steady_tgt) / (dry_at - t0) : 0.0;
        if (base == 0) base = tps, steady_base = steady_tps;
        std::printf("%-9d %-7s %14.1f %7.2fx %14.1f %7.2fx %9lld %14.1f %7.0f%% %9.1f %10lld\n", ns,
                    std::string(kernels::isa_name(levels[level].second)).c_str(), tps, tps / base, steady_tps,
                    steady_base > 0 ? steady_tps / steady_base : 0.0, static_cast<long long>(forwards),
                    static_cast<double>(tf.tokens_forwarded() - rows_before) /
                        static_cast<double>(std::max<int64_t>(1, forwards)),
                    100 * (t1 - (dry_at > 0 ? dry_at : t1)) / dt, dt, static_cast<long long>(tgt));
        std::fflush(stdout);
        ratios[level].push_back(tps / base);
      }
    }
    if (repeat > 1) {
      std::printf("median of %d rounds, target tok/s vs the first level:", repeat);
      for (size_t level = 0; level < levels.size(); ++level) {
        std::vector<double>& r = ratios[level];
        std::sort(r.begin(), r.end());
        const size_t m = r.size() / 2;
        std::printf("  %d %s: %.2fx", levels[level].first,
                    std::string(kernels::isa_name(levels[level].second)).c_str(),
                    r.size() % 2 ? r[m] : 0.5 * (r[m - 1] + r[m]));
      }
      std::printf("\n");
    }
  }
  return 0;
}
