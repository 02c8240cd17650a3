// Paired bootstrap: properties that follow from the definition (sacreBLEU significance.py).
#include "eval/bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "util/splitmix64.h"

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

// Seed bootstrap, one segment: resampling segments changes nothing, so each resampled difference is the
// system's BLEU minus the mean of two draws from the baseline's two runs {b1, b2}: s − b1, s − (b1 + b2)/2
// or s − b2 with probabilities 1/4, 1/2, 1/4. Of 1000 resamples, about 250 take each extreme, far more than
// the 25 the interval's order statistics skip, so the interval is exactly [s − max b, s − min b].
TEST(SeedBootstrap, OneSegmentGivesTheSeedSpread) {
  const std::vector<std::vector<BleuStats>> base = {stats_of({"the cat sat on a mat"}, {kRefs[0]}),
                                                    stats_of({"a cat sat on the mat"}, {kRefs[0]})};
  const std::vector<std::vector<BleuStats>> sys = {stats_of({"the cat sat on the mat"}, {kRefs[0]})};
  auto r = seed_bootstrap_bleu(base, sys, BleuOptions{});
  ASSERT_TRUE(r.ok());
  const double b1 = compute_bleu(base[0][0], BleuOptions{}).score;
  const double b2 = compute_bleu(base[1][0], BleuOptions{}).score;
  ASSERT_NE(b1, b2);
  EXPECT_NEAR(r->system_mean, 100.0, 1e-9);
  EXPECT_NEAR(r->baseline_mean, 0.5 * (b1 + b2), 1e-12);
  EXPECT_NEAR(r->diff, 100.0 - 0.5 * (b1 + b2), 1e-12);
  EXPECT_NEAR(r->diff_lower, 100.0 - std::max(b1, b2), 1e-9);
  EXPECT_NEAR(r->diff_upper, 100.0 - std::min(b1, b2), 1e-9);
  EXPECT_NEAR(sample_sd({b1, b2}), std::abs(b1 - b2) / std::sqrt(2.0), 1e-12);
}

// Every run of both systems the same: every resampled difference is 0, up to the rounding of the means.
TEST(SeedBootstrap, IdenticalRunsGiveZero) {
  const auto s = stats_of({"the cat sat on a mat", "a dog barked", "it rains in paris", "we like tea",
                           "the train left", "she reads a book"},
                          kRefs);
  auto r = seed_bootstrap_bleu({s, s, s}, {s, s}, BleuOptions{}, 300);
  ASSERT_TRUE(r.ok());
  // Each resample's means add 2 or 3 equal scores ≤ 100 and divide: each rounds by at most 3 ulps of 100
  // (3 × 100 × 2^-52 ≈ 6.7e-14), so their difference is within 1.4e-13 of 0.
  EXPECT_NEAR(r->diff, 0.0, 1.4e-13);
  EXPECT_NEAR(r->diff_lower, 0.0, 1.4e-13);
  EXPECT_NEAR(r->diff_upper, 0.0, 1.4e-13);
}

// A second implementation written from the definition in bootstrap.h, working on the texts: each resample
// rebuilds the resampled hypothesis and reference lists of every run and scores them from the strings.
TEST(SeedBootstrap, MatchesAnImplementationOnTheTexts) {
  const std::vector<std::vector<std::string>> base_texts = {
      {"the cat sat on a mat", "a dog barked at a moon", "it rains today in rome", "we like tea a lot",
       "the train left", "she reads a book"},
      {"a cat sat on the mat", "the dog barked at the moon", "it rains in paris", "we like green tea",
       "a train left at noon", "she reads a long book"}};
  const std::vector<std::vector<std::string>> sys_texts = {
      {"the cat sat on the mat", "a dog barked at the moon", "it rains today", "we like green tea a lot",
       "the train left at noon", "she reads a book"},
      {"the cat sat on the mat", "a dog barked", "it rains today in paris", "we like tea a lot",
       "the train left at noon", "she reads a long book"},
      {"the cat sat", "a dog barked at the moon", "it rains today in paris", "we like green tea",
       "the train left", "she reads a long book"}};
  std::vector<std::vector<BleuStats>> base, sys;
  for (const auto& t : base_texts) base.push_back(stats_of(t, kRefs));
  for (const auto& t : sys_texts) sys.push_back(stats_of(t, kRefs));
  const int n_samples = 200;
  auto r = seed_bootstrap_bleu(base, sys, BleuOptions{}, n_samples, 99);
  ASSERT_TRUE(r.ok());

  SplitMix64 rng(99);
  auto corpus_bleu = [](const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
    auto s = bleu_corpus_stats(hyps, {refs}, BleuOptions{});
    EXPECT_TRUE(s.ok());
    return compute_bleu(sum_stats(*s, BleuOptions{}.max_ngram_order), BleuOptions{}).score;
  };
  std::vector<double> diffs;
  for (int s = 0; s < n_samples; ++s) {
    std::vector<size_t> idx(kRefs.size());
    for (auto& i : idx) i = static_cast<size_t>(rng.below(kRefs.size()));
    std::vector<std::string> refs;
    for (size_t i : idx) refs.push_back(kRefs[i]);
    auto mean_over_drawn_runs = [&](const std::vector<std::vector<std::string>>& runs) {
      std::vector<double> score;
      for (const auto& run : runs) {
        std::vector<std::string> hyps;
        for (size_t i : idx) hyps.push_back(run[i]);
        score.push_back(corpus_bleu(hyps, refs));
      }
      double sum = 0.0;
      for (size_t k = 0; k < runs.size(); ++k) sum += score[static_cast<size_t>(rng.below(runs.size()))];
      return sum / static_cast<double>(runs.size());
    };
    const double b = mean_over_drawn_runs(base_texts);
    diffs.push_back(mean_over_drawn_runs(sys_texts) - b);
  }
  std::sort(diffs.begin(), diffs.end());
  // Both sides add the same integer n-gram counts and take the same logs: equal to the last bits, up to
  // the order of the additions in the means (3 terms × 100 × 2^-52 ≈ 7e-14).
  EXPECT_NEAR(r->diff_lower, diffs[n_samples / 40], 1e-12);
  EXPECT_NEAR(r->diff_upper, diffs[n_samples - n_samples / 40 - 1], 1e-12);
  double bm = 0.0, sm = 0.0;
  for (const auto& t : base_texts) bm += corpus_bleu(t, kRefs) / 2.0;
  for (const auto& t : sys_texts) sm += corpus_bleu(t, kRefs) / 3.0;
  EXPECT_NEAR(r->diff, sm - bm, 1e-12);
  EXPECT_GT(r->diff_upper, r->diff_lower);
}

// Paired seeds, one segment: the system's runs are the baseline's runs (the same models), b1 ≠ b2. Paired,
// both sides draw the same runs, so every resampled difference is exactly 0. Apart, each side's mean of two
// draws is min b, the midpoint or max b with probabilities 1/4, 1/2, 1/4, so the difference is −Δ or +Δ
// (Δ = |b1 − b2|) with probability 1/16 each: about 62 of 1000 resamples, more than the 25 the interval
// skips on each side, so the interval is exactly [−Δ, +Δ].
TEST(SeedBootstrap, PairedSeedsCancelTheTrainingNoiseTheSystemsShare) {
  const std::vector<std::vector<BleuStats>> runs = {stats_of({"the cat sat on a mat"}, {kRefs[0]}),
                                                    stats_of({"a cat sat on the mat"}, {kRefs[0]})};
  const double delta =
      std::abs(compute_bleu(runs[0][0], BleuOptions{}).score - compute_bleu(runs[1][0], BleuOptions{}).score);
  ASSERT_GT(delta, 1.0);
  auto paired = seed_bootstrap_bleu(runs, runs, BleuOptions{}, 1000, 12345, true);
  ASSERT_TRUE(paired.ok());
  EXPECT_EQ(paired->diff_lower, 0.0);
  EXPECT_EQ(paired->diff_upper, 0.0);
  auto apart = seed_bootstrap_bleu(runs, runs, BleuOptions{}, 1000, 12345, false);
  ASSERT_TRUE(apart.ok());
  // Means of two BLEU values ≤ 100: rounding below 2 ulps of 100 (≈ 3e-14) on each side.
  EXPECT_NEAR(apart->diff_lower, -delta, 1e-12);
  EXPECT_NEAR(apart->diff_upper, delta, 1e-12);
  EXPECT_FALSE(seed_bootstrap_bleu(runs, {runs[0]}, BleuOptions{}, 100, 1, true).ok());  // 2 runs against 1
}

TEST(SeedBootstrap, RejectsMismatchedRuns) {
  const auto a = stats_of(kRefs, kRefs);
  EXPECT_FALSE(seed_bootstrap_bleu({a}, {{a[0]}}, BleuOptions{}).ok());
  EXPECT_FALSE(seed_bootstrap_bleu({}, {a}, BleuOptions{}).ok());
  EXPECT_FALSE(seed_bootstrap_bleu({a}, {a}, BleuOptions{}, 0).ok());
}

}  // namespace
}  // namespace gpstream::eval
