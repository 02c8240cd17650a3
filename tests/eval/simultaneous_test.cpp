// The simultaneous evaluator with a scripted model: SimulEval-style word-by-word driving gives wait-k
// delays; instances.log lines carry SimulEval's keys in order; rescoring the log (gpstream score's
// path) reproduces the scores computed from the in-memory records; paced runs use ms.
#include "eval/simultaneous.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../stream/copy_model.h"
#include "eval/scores.h"

namespace gpstream {
namespace {

TEST(Simultaneous, WaitKDelaysInstancesLogAndRescoring) {
  testing::CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so;
  so.k = 2;
  const std::vector<eval::TestPair> pairs = {{"the cat sat on the mat", "the cat sat on the mat"},
                                             {"hello world", "hello there world"}};
  auto recs = eval::evaluate_corpus(model, codec, so, pairs, {});
  ASSERT_TRUE(recs.ok()) << recs.error().message();
  ASSERT_EQ(recs->size(), 2u);
  // By hand: word j after min(2 + j − 1, M) words.
  EXPECT_EQ((*recs)[0].delays, (std::vector<double>{2, 3, 4, 5, 6, 6}));
  EXPECT_EQ((*recs)[1].delays, (std::vector<double>{2, 2}));
  // Units read, the end marker counted: the last word of each needs k + j = 7 (3) units, which only the end
  // marker after the 6 (2) words supplies.
  EXPECT_EQ((*recs)[0].unit_delays, (std::vector<double>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ((*recs)[1].unit_delays, (std::vector<double>{2, 3}));
  EXPECT_EQ((*recs)[0].prediction, "the cat sat on the mat");
  EXPECT_EQ((*recs)[0].source_length, 6);

  const std::string line = (*recs)[1].to_json_line();
  auto j = nlohmann::ordered_json::parse(line);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"index", "prediction", "delays", "elapsed", "prediction_length",
                                            "reference", "source", "source_length", "unit_delays"}));
  EXPECT_EQ(j["index"], 1);
  EXPECT_EQ(j["prediction"], "hello world");

  std::string log;
  for (const auto& r : *recs) log += r.to_json_line() + "\n";
  auto parsed = eval::parse_instances_log(log, "instances.log");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  auto a = eval::score_instances(*recs, {});
  auto b = eval::score_instances(parsed->records, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(eval::format_scores_tsv(a->scores), eval::format_scores_tsv(b->scores));
  // Sentence 2: AL with reference length 3: γ = 3/2; d = 2, 2; τ = 1 (d_1 ≥ |X|) → AL = 2.
  EXPECT_EQ(eval::latency_al(std::vector<double>{2, 2}, 2, 3), 2.0);

  // The paper's definition from the re-read log: |X| 7, γ = 6/7: Σd − (7/6)·Σt = 27 − 17.5 → 9.5/6; |X| 3,
  // γ = 2/3: (2) + (3 − 1.5) → 1.75; sum / len = (19/12 + 7/4) / 2 = 5/3. Tolerance: a few ulp of 10.
  eval::ScoreOptions paper;
  paper.quality = false;
  paper.latency.definition = eval::LatencyDefinition::Paper;
  paper.latency.metrics = {"AL", "LAAL"};
  auto p = eval::score_instances(parsed->records, paper);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->scores.size(), 2u);
  EXPECT_NEAR(p->scores[0].second.value, 5.0 / 3.0, 8 * 10 * 2.220446049250313e-16);
  EXPECT_NEAR(p->scores[1].second.value, 5.0 / 3.0, 8 * 10 * 2.220446049250313e-16);
}

TEST(Simultaneous, PacedRunsReportMilliseconds) {
  testing::CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so;
  so.k = 1;
  eval::SimultaneousOptions paced;
  paced.pace_words_per_s = 2.0;  // 500 ms a word
  auto rec = eval::evaluate_sentence(model, codec, so, {"a b c", "a b c"}, paced);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->delays, (std::vector<double>{500, 1000, 1500}));
  EXPECT_EQ(rec->source_length, 1500);
  ASSERT_EQ(rec->elapsed.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_GE(rec->elapsed[i], rec->delays[i]);  // never before the word was heard
}

TEST(Simultaneous, TestFilesAreCheckedLineByLine) {
  EXPECT_FALSE(eval::read_test_tsv("/nonexistent.tsv").ok());
  const std::string dir = ::testing::TempDir();
  {
    std::FILE* f = std::fopen((dir + "/bad.tsv").c_str(), "w");
    std::fputs("a\tb\nno tab here\n", f);
    std::fclose(f);
  }
  auto r = eval::read_test_tsv(dir + "/bad.tsv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(":2:"), std::string::npos);
}

}  // namespace
}  // namespace gpstream
