// scores.tsv reading (for gpstream plot): the format gpstream eval writes reads back; bad files are refused.
#include "eval/scores_tsv.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "eval/scores.h"

namespace gpstream {
namespace {

std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

TEST(ScoresTsv, ReadsWhatEvalWrites) {
  eval::NamedScores s = {{"BLEU", {12.3456, false}}, {"LAAL", {3.0, false}}, {"AL", {2, true}}};
  auto r = eval::read_scores_tsv(write_tmp("ok.tsv", eval::format_scores_tsv(s)));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].first, "BLEU");
  EXPECT_DOUBLE_EQ((*r)[0].second, 12.346);  // round(x, 3) as SimulEval writes it
  EXPECT_DOUBLE_EQ((*r)[2].second, 2.0);
}

TEST(ScoresTsv, RefusesMalformedFiles) {
  EXPECT_FALSE(eval::read_scores_tsv(write_tmp("a.tsv", "BLEU\tAL\n1.0\n")).ok());
  EXPECT_FALSE(eval::read_scores_tsv(write_tmp("b.tsv", "BLEU\nabc\n")).ok());
  EXPECT_FALSE(eval::read_scores_tsv(write_tmp("c.tsv", "BLEU\n")).ok());
  EXPECT_FALSE(eval::read_scores_tsv("/nonexistent/scores.tsv").ok());
}

}  // namespace
}  // namespace gpstream
