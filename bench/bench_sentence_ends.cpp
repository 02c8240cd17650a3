// How well the model finds sentence ends in text without punctuation (stream/sentence_ends.h), and at what
// cost: the sources of a test set, punctuation removed (eval::strip_punctuation), read as one word stream;
// before each word the detector decides whether a sentence ended, its context starting afresh at each end
// it finds, as a session's segment does. Against the true ends (the last word of each source sentence) it
// prints precision, recall and F1 for each bias, and the detector's cost per word. Choose the bias on
// training pairs, never on the test set.
//   bench_sentence_ends -m models/gpstream-en-fr --tsv data/corpus/en-fr.train.tsv [--skip 50000]
//                       [--limit 1000] [--bias -4,-2,0,2] [--lookahead 0|1] [-t THREADS]
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "eval/long_form_talks.h"
#include "eval/simultaneous.h"
#include "kernels/blas_kernels.h"
#include "stream/sentence_ends.h"
#include "stream/streaming_model.h"
#include "tokenizer/segment_encoder.h"
#include "util/clock.h"

using namespace gpstream;

namespace {

struct Args {
  std::string model, tsv;
  size_t skip = 0, limit = 1000;
  std::vector<double> biases = {-4, -2, 0, 2};
  int threads = 1;
  int lookahead = 1;  // words after the one before which the detector decides: 0 or 1
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "-m" && has_value) {
      a.model = argv[++i];
    } else if (arg == "--tsv" && has_value) {
      a.tsv = argv[++i];
    } else if (arg == "--skip" && has_value) {
      a.skip = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--limit" && has_value) {
      a.limit = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--lookahead" && has_value) {
      a.lookahead = std::atoi(argv[++i]);
    } else if (arg == "-t" && has_value) {
      a.threads = std::atoi(argv[++i]);
    } else if (arg == "--bias" && has_value) {
      a.biases.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');)
        a.biases.push_back(std::strtod(item.c_str(), nullptr));
    } else {
      std::fprintf(stderr,
                   "usage: bench_sentence_ends -m MODEL --tsv FILE [--skip N] [--limit N] [--bias B,B,...] "
                   "[--lookahead 0|1] [-t THREADS]\n");
      return false;
    }
  }
  if (a.model.empty() || a.tsv.empty() || a.biases.empty()) {
    std::fprintf(stderr, "bench_sentence_ends: -m and --tsv are required\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kernels::use_fast_blas_kernels(argv);
  Args a;
  if (!parse(argc, argv, a)) return 2;
  auto m = stream::StreamingModel::load(a.model, a.threads);
  if (!m) return std::fprintf(stderr, "bench_sentence_ends: %s\n", m.error().message().c_str()), 1;
  auto pairs = eval::read_test_tsv(a.tsv);
  if (!pairs) return std::fprintf(stderr, "bench_sentence_ends: %s\n", pairs.error().message().c_str()), 1;
  std::vector<std::string> words;
  std::vector<bool> ends;  // ends[i]: word i is the last of its sentence
  for (size_t p = a.skip; p < pairs->size() && p < a.skip + a.limit; ++p) {
    for (std::string& w : tokenizer::split_words(eval::strip_punctuation((*pairs)[p].source))) {
      words.push_back(std::move(w));
      ends.push_back(false);
    }
    if (!ends.empty()) ends.back() = true;
  }
  std::printf("%zu words, %zu sentences (pairs %zu..%zu of %s)\n", words.size(),
              std::min(a.limit, pairs->size() - std::min(a.skip, pairs->size())), a.skip, a.skip + a.limit,
              a.tsv.c_str());
  std::printf("%8s %9s %7s %7s %7s %10s\n", "bias", "found", "prec", "recall", "F1", "us/word");
  for (double bias : a.biases) {
    if (!m->sentence_ends())
      return std::fprintf(stderr, "bench_sentence_ends: the vocabulary has no sentence-end mark\n"), 1;
    stream::SentenceEndDetector d(*m->model, *m->codec, m->sentence_ends(), 1 << 13, bias);
    int64_t found = 0, right = 0, truth = 0;
    const double t0 = steady_seconds();
    for (size_t i = 0; i < words.size(); ++i) {
      Result<bool> cut = false;
      if (i == 0) {
        if (Status st = d.feed(words[i]); !st.ok()) cut = st.error();
      } else if (a.lookahead > 0 && i + 1 < words.size()) {
        cut = d.ends_before(words[i], words[i + 1]);
      } else {
        cut = d.ends_before(words[i]);
      }
      if (!cut) return std::fprintf(stderr, "bench_sentence_ends: %s\n", cut.error().message().c_str()), 1;
      if (i > 0) {
        truth += ends[i - 1];
        found += *cut;
        right += *cut && ends[i - 1];
      }
    }
    const double us = (steady_seconds() - t0) * 1e6 / static_cast<double>(std::max<size_t>(words.size(), 1));
    const double precision = found ? static_cast<double>(right) / static_cast<double>(found) : 0;
    const double recall = truth ? static_cast<double>(right) / static_cast<double>(truth) : 0;
    const double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
    std::printf("%8.2f %9lld %7.3f %7.3f %7.3f %10.1f\n", bias, static_cast<long long>(found), precision,
                recall, f1, us);
  }
  return 0;
}
