// Corpus BLEU and chrF on 60 seeded random corpora (multi- and variable references, empty
// hypotheses, all tokenizers and smoothing methods, orders 1-6, chrF++ and eps smoothing) against
// tests/eval/data/metric_golden.jsonl, written by a plain-Python restatement of sacreBLEU's
// algorithms (scripts/gen_eval_metric_golden.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "eval/bleu.h"
#include "eval/chrf.h"

namespace gpstream::eval {
namespace {

TEST(MetricGolden, MatchesPythonRestatement) {
  const std::string path = std::string(GPSTREAM_SOURCE_DIR) + "/tests/eval/data/metric_golden.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto j = nlohmann::json::parse(line);
    const auto hyps = j["hyps"].get<std::vector<std::string>>();
    const auto refs = j["refs"].get<std::vector<std::vector<std::string>>>();
    const auto& o = j["options"];
    const double want = j["score"].get<double>();
    if (j["metric"] == "bleu") {
      BleuOptions b;
      b.tokenize = *parse_tokenizer(o["tok"].get<std::string>());
      if (o.contains("lowercase")) b.lowercase = o["lowercase"].get<bool>();
      if (o.contains("smooth")) b.smooth_method = *parse_smooth_method(o["smooth"].get<std::string>());
      if (o.contains("smooth_value")) b.smooth_value = o["smooth_value"].get<double>();
      if (o.contains("order")) b.max_ngram_order = o["order"].get<int>();
      if (o.contains("eff")) b.effective_order = o["eff"].get<bool>();
      auto stats = bleu_corpus_stats(hyps, refs, b);
      ASSERT_TRUE(stats.ok()) << "case " << n << ": " << stats.error().message();
      const auto sum = sum_stats(*stats, b.max_ngram_order);
      EXPECT_EQ(sum.correct, j["counts"].get<std::vector<int64_t>>()) << "case " << n;
      EXPECT_EQ(sum.total, j["totals"].get<std::vector<int64_t>>()) << "case " << n;
      EXPECT_EQ(sum.hyp_len, j["sys_len"].get<int64_t>()) << "case " << n;
      EXPECT_EQ(sum.ref_len, j["ref_len"].get<int64_t>()) << "case " << n;
      EXPECT_NEAR(compute_bleu(sum, b).score, want, 1e-9 * std::max(1.0, want)) << "case " << n;
    } else {
      ChrfOptions c;
      c.char_order = o["nc"].get<int>();
      c.word_order = o["nw"].get<int>();
      c.beta = o["beta"].get<int>();
      c.lowercase = o["lowercase"].get<bool>();
      c.whitespace = o["ws"].get<bool>();
      c.eps_smoothing = o["eps_mode"].get<bool>();
      auto r = corpus_chrf(hyps, refs, c);
      ASSERT_TRUE(r.ok()) << "case " << n << ": " << r.error().message();
      EXPECT_NEAR(r->score, want, 1e-9 * std::max(1.0, want)) << "case " << n;
    }
  }
  EXPECT_EQ(n, 60);
}

}  // namespace
}  // namespace gpstream::eval
