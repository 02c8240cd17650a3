// Paired bootstrap: properties that follow from the definition (sacreBLEU significance.py).
#include "eval/bootstrap.h"

#include <gtest/gtest.h>

namespace gpstream::eval {
namespace {

std::vector<BleuStats> stats_of(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  auto r = bleu_corpus_stats(hyps, {refs}, BleuOptions{});
  EXPECT_TRUE(r.ok());
  return *r;
}

const std::vector<std::string> kRefs = {"the cat sat on the mat",  "a dog barked at the moon",
                                        "it rains today in paris", "we like green tea a lot",
                                        "the train left at noon",  "she reads a long book"};

// Identical systems: every resampled difference is 0, so no |Δ*| − mean exceeds |Δ| = 0 and
// p = 1/(S+1); the difference interval is [0, 0]; both estimates coincide.
TEST(PairedBootstrap, IdenticalSystems) {
  const auto s = stats_of({"the cat sat on a mat", "a dog barked", "it rains in paris", "we like tea",
                           "the train left", "she reads a book"},
                          kRefs);
  auto r = paired_bootstrap_bleu(s, s, BleuOptions{}, 1000, 12345);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->p_value, 1.0 / 1001.0);
  EXPECT_EQ(r->diff_lower, 0.0);
  EXPECT_EQ(r->diff_upper, 0.0);
  EXPECT_EQ(r->baseline.mean, r->system.mean);
  EXPECT_EQ(r->baseline.ci, r->system.ci);
}

// One segment: every resample is that segment → mean = score, CI 0.
TEST(PairedBootstrap, SingleSegment) {
  const auto a = stats_of({"the cat sat on a mat"}, {kRefs[0]});
  const auto b = stats_of({"the cat sat on the mat"}, {kRefs[0]});
  auto r = paired_bootstrap_bleu(a, b, BleuOptions{}, 200);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->system.mean, 100.0, 1e-9);
  EXPECT_EQ(r->system.ci, 0.0);
  EXPECT_NEAR(r->diff_lower, r->diff, 1e-9);
  EXPECT_NEAR(r->diff_upper, r->diff, 1e-9);
}

// The system equals the references: better on every segment → the difference interval is
// positive; same seed → same numbers; another seed → (almost surely) different ones.
TEST(PairedBootstrap, DeterministicAndDirectional) {
  const auto base = stats_of({"the cat sat on a mat", "a dog barked at a moon", "it rains today in rome",
                              "we like tea a lot", "the train left", "she reads a book"},
                             kRefs);
  const auto sys = stats_of(kRefs, kRefs);
  auto r1 = paired_bootstrap_bleu(base, sys, BleuOptions{});
  auto r2 = paired_bootstrap_bleu(base, sys, BleuOptions{});
  auto r3 = paired_bootstrap_bleu(base, sys, BleuOptions{}, 1000, 7);
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
  EXPECT_EQ(r1->system.mean, r2->system.mean);
  EXPECT_EQ(r1->p_value, r2->p_value);
  EXPECT_NE(r1->baseline.mean, r3->baseline.mean);
  EXPECT_GT(r1->diff_lower, 0.0);
  EXPECT_NEAR(r1->system.score, 100.0, 1e-9);
  EXPECT_FALSE(paired_bootstrap_bleu(base, {sys[0]}, BleuOptions{}).ok());
}

}  // namespace
}  // namespace gpstream::eval
