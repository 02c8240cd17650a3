// Paired bootstrap comparison of two quality–latency curves (eval/curve_bootstrap.h): interpolation and the
// full-set differences derived by hand, the resampling against a second, brute-force implementation written
// here (resampled instance lists scored by score_instances, as `gpstream score` scores a run, and a plain
// interpolation loop), and the errors for settings on different sentences.
#include "eval/curve_bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "eval/scores.h"
#include "util/splitmix64.h"

namespace gpstream::eval {
namespace {

// Sentence statistics whose every n-gram precision is correct/10 with hyp_len = ref_len (BP = 1), so a
// corpus of them has BLEU = 100 · Σcorrect / Σtotal exactly as derived by hand.
BleuStats stats(int64_t correct) {
  BleuStats s;
  s.hyp_len = s.ref_len = 10;
  s.correct.assign(4, correct);
  s.total.assign(4, 10);
  return s;
}

CurveSetting setting(std::string name, std::vector<int64_t> correct, std::vector<double> latency) {
  CurveSetting s;
  s.name = std::move(name);
  for (int64_t c : correct) s.bleu.push_back(stats(c));
  for (double l : latency) s.latency.push_back(PyNumber{l, false});
  return s;
}

TEST(InterpolateCurve, LinearBetweenSortedNeighboursNoExtrapolation) {
  // Points given out of order: (3, 40), (1, 20), (5, 30). Sorted: (1,20) (3,40) (5,30).
  const std::vector<CurvePoint> p = {{3, 40}, {1, 20}, {5, 30}};
  EXPECT_DOUBLE_EQ(*interpolate_curve(p, 1), 20);
  EXPECT_DOUBLE_EQ(*interpolate_curve(p, 2), 30);      // 20 + (1/2)·20
  EXPECT_DOUBLE_EQ(*interpolate_curve(p, 3), 40);      // a point itself
  EXPECT_DOUBLE_EQ(*interpolate_curve(p, 4.5), 32.5);  // the dip is kept: 40 + (3/4)·(30 − 40)
  EXPECT_DOUBLE_EQ(*interpolate_curve(p, 5), 30);
  EXPECT_FALSE(interpolate_curve(p, 0.999));
  EXPECT_FALSE(interpolate_curve(p, 5.001));
  EXPECT_FALSE(interpolate_curve(p, std::nan("")));
  EXPECT_FALSE(interpolate_curve({}, 1));
  // One point: only its own latency.
  EXPECT_DOUBLE_EQ(*interpolate_curve({{2, 10}}, 2), 10);
  EXPECT_FALSE(interpolate_curve({{2, 10}}, 2.5));
  // Two points at one latency merge into their mean BLEU: (2, 10) and (2, 30) → (2, 20); then to (4, 40).
  const std::vector<CurvePoint> tied = {{2, 10}, {4, 40}, {2, 30}};
  EXPECT_DOUBLE_EQ(*interpolate_curve(tied, 2), 20);
  EXPECT_DOUBLE_EQ(*interpolate_curve(tied, 3), 30);
}

// Four sentences. Baseline (wait-k-like): latencies 1.5, 3.5, 5.5 (per-sentence values 1,1,2,2 / 3,3,4,4 /
// 5,5,6,6) and BLEU 20, 40, 50 (2, 4, 5 of 10 n-grams correct in every sentence). System: latencies 2.5 and
// 4.5, BLEU 40 and 50.
//   at 2: baseline 20 + (0.5/2)·20 = 25; system: 2 < 2.5, out of its range → no difference.
//   at 3: baseline 20 + (1.5/2)·20 = 35; system 40 + (0.5/2)·10 = 42.5; difference 7.5.
//   at 4: baseline 40 + (0.5/2)·10 = 42.5; system 40 + (1.5/2)·10 = 47.5; difference 5.
TEST(CompareCurves, FullSetDifferencesByHand) {
  const std::vector<CurveSetting> base = {setting("k1", {2, 2, 2, 2}, {1, 1, 2, 2}),
                                          setting("k3", {4, 4, 4, 4}, {3, 3, 4, 4}),
                                          setting("k5", {5, 5, 5, 5}, {5, 5, 6, 6})};
  const std::vector<CurveSetting> sys = {setting("tau0.2", {4, 4, 4, 4}, {2, 2, 3, 3}),
                                         setting("tau0.5", {5, 5, 5, 5}, {4, 4, 5, 5})};
  CurveCompareOptions o;
  o.at = {2, 3, 4};
  o.n_samples = 50;
  auto r = compare_curves(base, sys, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->baseline_points.size(), 3u);
  EXPECT_DOUBLE_EQ(r->baseline_points[0].latency, 1.5);
  EXPECT_NEAR(r->baseline_points[0].quality, 20, 1e-9);
  EXPECT_DOUBLE_EQ(r->baseline_points[2].latency, 5.5);
  EXPECT_NEAR(r->system_points[1].quality, 50, 1e-9);
  ASSERT_EQ(r->at.size(), 3u);
  EXPECT_NEAR(*r->at[0].baseline, 25, 1e-9);
  EXPECT_FALSE(r->at[0].system);
  EXPECT_FALSE(r->at[0].diff);
  EXPECT_NEAR(*r->at[1].baseline, 35, 1e-9);
  EXPECT_NEAR(*r->at[1].system, 42.5, 1e-9);
  EXPECT_NEAR(*r->at[1].diff, 7.5, 1e-9);
  EXPECT_NEAR(*r->at[2].diff, 5, 1e-9);
  // Every sentence has the same BLEU statistics in a setting, so each resample's BLEU is the full set's; the
  // latencies move. At 4 both curves always reach it (baseline 1..2 to 5..6, system 2..3 to 4..5): every
  // resample counts. The system's lowest latency lies in [2, 3], so at 2 only the resamples of sentences with
  // latency 2 (sentences 0 and 1 alone) reach it.
  EXPECT_EQ(r->at[2].n_valid, 50);
  EXPECT_EQ(r->at[2].n_out_of_range, 0);
  EXPECT_EQ(r->at[0].n_valid + r->at[0].n_out_of_range, 50);
  EXPECT_EQ(r->at[0].n_baseline_out_of_range, 0);
  EXPECT_EQ(r->at[0].n_system_out_of_range, r->at[0].n_out_of_range);
  EXPECT_GT(r->at[0].n_out_of_range, 0);
  EXPECT_EQ(r->n_sentences, 4u);
  EXPECT_EQ(r->seed, 12345u);
}

// Identical curves: every resampled difference is 0.
// WER curves: each setting's sentences have `edits` edits against 10 reference words each, so a corpus of
// them has WER = 100 · Σedits / Σreference words, whatever the resample. Baseline (latency 1, 40 %), (3,
// 20 %); system (2, 20 %), (4, 10 %). At 2: baseline 40 − (1/2)·20 = 30, system 20: −10. At 3: baseline 20,
// system 20 − (1/2)·10 = 15: −5. The resamples move only the latencies, and every latency is the same for a
// setting's sentences here, so each resample's difference is the full set's.
TEST(CompareCurves, WerCurvesByHand) {
  auto wer_setting = [](std::string name, int64_t edits, double latency) {
    CurveSetting s;
    s.name = std::move(name);
    for (int i = 0; i < 4; ++i) {
      WerCounts c;
      c.substitutions = edits;
      c.hits = 10 - edits;
      c.reference_words = c.hypothesis_words = 10;
      s.wer.push_back(c);
      s.latency.push_back(PyNumber{latency, false});
    }
    return s;
  };
  CurveCompareOptions o;
  o.quality = CurveQuality::Wer;
  o.at = {2, 3};
  o.n_samples = 40;
  auto r = compare_curves({wer_setting("k1", 4, 1), wer_setting("k3", 2, 3)},
                          {wer_setting("a", 2, 2), wer_setting("b", 1, 4)}, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->baseline_points[0].quality, 40, 1e-9);
  EXPECT_NEAR(r->system_points[1].quality, 10, 1e-9);
  EXPECT_NEAR(*r->at[0].diff, -10, 1e-9);
  EXPECT_NEAR(*r->at[1].diff, -5, 1e-9);
  for (const auto& d : r->at) {
    EXPECT_EQ(d.n_valid, 40);
    EXPECT_NEAR(*d.lower, *d.diff, 1e-9);
    EXPECT_NEAR(*d.upper, *d.diff, 1e-9);
    EXPECT_TRUE(d.excludes_zero);
  }
  // The BLEU statistics are not there: a WER setting compared by BLEU has no sentences.
  o.quality = CurveQuality::Bleu;
  EXPECT_FALSE(compare_curves({wer_setting("k1", 4, 1)}, {wer_setting("a", 2, 2)}, o).ok());
}

TEST(CompareCurves, IdenticalCurvesDifferByZero) {
  const std::vector<CurveSetting> c = {setting("a", {1, 3, 5, 7}, {1, 2, 2, 3}),
                                       setting("b", {4, 6, 6, 9}, {3, 4, 5, 5})};
  CurveCompareOptions o;
  o.at = {2.5, 3.0};
  auto r = compare_curves(c, c, o);
  ASSERT_TRUE(r.ok());
  for (const auto& d : r->at) {
    EXPECT_EQ(*d.diff, 0.0);
    if (d.n_valid == 0) continue;
    EXPECT_EQ(*d.lower, 0.0);
    EXPECT_EQ(*d.upper, 0.0);
    EXPECT_FALSE(d.excludes_zero);
    EXPECT_EQ(d.n_baseline_out_of_range, d.n_system_out_of_range);
  }
}

TEST(CompareCurves, RefusesSettingsOnOtherSentences) {
  const std::vector<CurveSetting> base = {setting("k1", {2, 2, 2, 2}, {1, 1, 2, 2})};
  const std::vector<CurveSetting> three = {setting("tau", {2, 2, 2}, {1, 1, 2})};
  CurveCompareOptions o;
  o.at = {1.5};
  auto r = compare_curves(base, three, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("same sentences"), std::string::npos) << r.error().message();
  EXPECT_FALSE(compare_curves(base, {}, o).ok());
  o.n_samples = 0;
  EXPECT_FALSE(compare_curves(base, base, o).ok());
  // A setting without any latency (no sentence has delays) has no point.
  CurveSetting none = setting("none", {2, 2, 2, 2}, {});
  none.latency.assign(4, std::nullopt);
  o.n_samples = 10;
  EXPECT_FALSE(compare_curves(base, {none}, o).ok());
}

// ---- text runs: instances as `gpstream eval` writes them ----

InstanceRecord record(int64_t index, std::string prediction, std::vector<double> delays,
                      std::string reference, std::string source, double source_length) {
  InstanceRecord r;
  r.index = index;
  r.prediction = std::move(prediction);
  r.delays = std::move(delays);
  r.elapsed.assign(r.delays.size(), 0.0);
  r.prediction_length = static_cast<int64_t>(r.delays.size());
  r.reference = std::move(reference);
  r.source = std::move(source);
  r.source_length = source_length;
  return r;
}

// Two sentences of 4 source words, references "a b c d" and "e f g h". A hypothesis equal to its reference
// has n-gram counts 4/4, 3/3, 2/2, 1/1; "x x x x" has 0/4, 0/3, 0/2, 0/1. One of each: precisions 1/2 each,
// BP 1 → BLEU 50. LAAL with |X| = |Y*| = 4 (γ = 1): delays 1,2,3,4 → τ = 4, (1+1+1+1)/4 = 1; delays 3,4,4,4
// → τ = 2, (3 + (4 − 1))/2 = 3. The setting's LAAL is their mean, 2.
TEST(CurveSettingFromInstances, BleuStatisticsAndLaalPerSentence) {
  const std::vector<InstanceRecord> run = {record(0, "a b c d", {1, 2, 3, 4}, "a b c d", "s t u v", 4),
                                           record(1, "x x x x", {3, 4, 4, 4}, "e f g h", "w x y z", 4)};
  auto s = curve_setting_from_instances("run", run, "LAAL", CurveQuality::Bleu, BleuOptions{});
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->latency.size(), 2u);
  EXPECT_DOUBLE_EQ(s->latency[0]->value, 1.0);
  EXPECT_DOUBLE_EQ(s->latency[1]->value, 3.0);
  EXPECT_EQ(s->bleu[0].correct, (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(s->bleu[1].correct, (std::vector<int64_t>{0, 0, 0, 0}));
  const SettingPoint p = setting_point(*s, CurveCompareOptions{});
  EXPECT_NEAR(p.quality, 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(*p.latency, 2.0);
  // A sentence without delays (an empty hypothesis) has no latency; one without a reference is an error.
  auto empty = curve_setting_from_instances("run", {record(0, "", {}, "a b c d", "s t u v", 4)}, "LAAL",
                                            CurveQuality::Bleu, BleuOptions{});
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->latency[0]);
  InstanceRecord no_ref = run[0];
  no_ref.reference.reset();
  EXPECT_FALSE(curve_setting_from_instances("run", {no_ref}, "LAAL", CurveQuality::Bleu, BleuOptions{}).ok());
  EXPECT_FALSE(curve_setting_from_instances("run", run, "ATD", CurveQuality::Bleu, BleuOptions{}).ok());
}

// instance_latencies' mean is compute_latency's corpus value (the mean `gpstream score` prints).
TEST(CurveSettingFromInstances, MeanOfInstanceLatenciesIsTheScoredValue) {
  std::vector<InstanceRecord> run;
  for (int i = 0; i < 7; ++i) {
    std::vector<double> d;
    for (int j = 0; j < 3 + i % 3; ++j) d.push_back(std::min(6.0, 1.0 + i % 4 + j));
    run.push_back(record(i, "a b c", i == 4 ? std::vector<double>{} : d, "a b c d e", "1 2 3 4 5 6", 6));
  }
  for (const char* metric : {"LAAL", "AL", "DAL", "AP"}) {
    LatencyOptions lo;
    lo.metrics = {metric};
    auto scored = compute_latency(run, lo);
    ASSERT_TRUE(scored.ok());
    auto per = instance_latencies(run, metric, false, lo);
    ASSERT_TRUE(per.ok());
    EXPECT_FALSE((*per)[4]);
    std::vector<PyNumber> values;
    for (const auto& v : *per)
      if (v) values.push_back(*v);
    EXPECT_EQ(python_mean(values).value, scored->scores[0].second.value) << metric;
  }
}

// From instances: "a b c d" against "a x c" is one substitution and one deletion (WER counts as score
// --speech aligns them).
TEST(CurveSettingFromInstances, WerCountsPerSentence) {
  auto s = curve_setting_from_instances("run", {record(0, "a x c", {1, 2, 3}, "a b c d", "s t u v", 4)},
                                        "LAAL", CurveQuality::Wer, BleuOptions{});
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->wer.size(), 1u);
  EXPECT_TRUE(s->bleu.empty());
  EXPECT_EQ(s->wer[0].substitutions, 1);
  EXPECT_EQ(s->wer[0].deletions, 1);
  EXPECT_EQ(s->wer[0].reference_words, 4);
}

TEST(CheckSameSentences, CountReferenceAndSource) {
  const std::vector<InstanceRecord> a = {record(0, "a", {1}, "r0", "s0", 1),
                                         record(1, "b", {1}, "r1", "s1", 1)};
  std::vector<InstanceRecord> b = a;
  b[0].prediction = "other";  // predictions and delays may differ
  b[1].delays = {2};
  EXPECT_TRUE(check_same_sentences({"A", "B"}, {&a, &b}).ok());
  const std::vector<InstanceRecord> shorter = {a[0]};
  auto count = check_same_sentences({"A", "C"}, {&a, &shorter});
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.error().message(), "C and A are not on the same sentences: 1 and 2 instances");
  std::vector<InstanceRecord> ref = a;
  ref[1].reference = "r1 changed";
  auto r = check_same_sentences({"A", "B", "D"}, {&a, &b, &ref});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "D and A are not on the same sentences: their instance 2 (index 1 and 1) has another reference");
  std::vector<InstanceRecord> src = a;
  src[0].source = "s0 changed";
  auto s = check_same_sentences({"A", "E"}, {&a, &src});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("has another source"), std::string::npos);
}

// ---- the resampling against a brute-force second implementation ----

// Deterministic pseudo-random runs: `n` sentences of 4 to 9 source words; each setting's hypothesis keeps a
// reference word with a probability that grows with `quality`, and its delays are wait-`lag` with jitter.
std::vector<InstanceRecord> make_run(size_t n, double lag, double quality, uint64_t seed) {
  const std::vector<std::string> pool = {"le",    "chat",  "dort", "sur", "la",    "table", "un",
                                         "chien", "mange", "pain", "il",  "pleut", "ici",   "beaucoup"};
  SplitMix64 sentences(7);  // the same sentences for every setting
  SplitMix64 rng(seed);
  std::vector<InstanceRecord> run;
  for (size_t i = 0; i < n; ++i) {
    const size_t src_len = 4 + sentences.below(6);
    const size_t ref_len = 3 + sentences.below(6);
    std::string ref, src, hyp;
    for (size_t w = 0; w < src_len; ++w) src += (w ? " w" : "w") + std::to_string(w);
    std::vector<std::string> ref_words;
    for (size_t w = 0; w < ref_len; ++w) ref_words.push_back(pool[sentences.below(pool.size())]);
    std::vector<double> delays;
    size_t hyp_len = 0;
    for (size_t w = 0; w < ref_len; ++w) {
      ref += (w ? " " : "") + ref_words[w];
      const std::string word = rng.uniform() < quality ? ref_words[w] : pool[rng.below(pool.size())];
      if (i == 3 && quality < 0.5) continue;  // one empty hypothesis in the weaker settings: no delays
      hyp += (hyp_len++ ? " " : "") + word;
      const double d = std::floor(lag + static_cast<double>(w) + rng.uniform() * 1.5);
      delays.push_back(std::min(static_cast<double>(src_len), std::max(1.0, d)));
    }
    std::sort(delays.begin(), delays.end());
    run.push_back(record(static_cast<int64_t>(i), hyp, delays, ref, src, static_cast<double>(src_len)));
  }
  return run;
}

struct BruteCurve {
  std::vector<std::pair<double, double>> points;  // (LAAL, BLEU)
};

// BLEU and LAAL of each setting over the resampled instance list, as `gpstream score` scores a log.
BruteCurve brute_curve(const std::vector<std::vector<InstanceRecord>>& settings,
                       const std::vector<size_t>& idx) {
  BruteCurve c;
  for (const auto& run : settings) {
    std::vector<InstanceRecord> sample;
    for (size_t i : idx) sample.push_back(run[i]);
    ScoreOptions so;
    so.latency.metrics = {"LAAL"};
    auto s = score_instances(sample, so);
    if (!s.ok()) continue;  // every resampled sentence without delays: no LAAL
    c.points.push_back({s->scores[1].second.value, s->scores[0].second.value});
  }
  return c;
}

// Plain linear interpolation: the segment [x_i, x_{i+1}] of the latency-sorted points that holds x.
std::optional<double> brute_at(BruteCurve c, double x) {
  std::sort(c.points.begin(), c.points.end());
  for (size_t i = 0; i < c.points.size(); ++i) {
    if (c.points[i].first == x) return c.points[i].second;
    if (i + 1 < c.points.size() && c.points[i].first < x && x < c.points[i + 1].first) {
      const auto [x0, y0] = c.points[i];
      const auto [x1, y1] = c.points[i + 1];
      return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  }
  return std::nullopt;
}

TEST(CompareCurves, ResamplingMatchesABruteForceImplementation) {
  const size_t n = 12;
  const std::vector<std::vector<InstanceRecord>> base = {make_run(n, 1, 0.3, 11), make_run(n, 2.5, 0.45, 12),
                                                         make_run(n, 4, 0.6, 13), make_run(n, 6, 0.7, 14)};
  const std::vector<std::vector<InstanceRecord>> sys = {make_run(n, 2, 0.5, 21), make_run(n, 3, 0.65, 22),
                                                        make_run(n, 5, 0.8, 23)};
  std::vector<CurveSetting> base_settings, sys_settings;
  for (const auto& r : base)
    base_settings.push_back(*curve_setting_from_instances("b", r, "LAAL", CurveQuality::Bleu, BleuOptions{}));
  for (const auto& r : sys)
    sys_settings.push_back(*curve_setting_from_instances("s", r, "LAAL", CurveQuality::Bleu, BleuOptions{}));

  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  const BruteCurve full_base = brute_curve(base, all), full_sys = brute_curve(sys, all);
  // Targets: the two ends of the latency range both curves share on the full set (out of range in many
  // resamples) and its middle.
  double lo = -1e9, hi = 1e9;
  for (const auto* c : {&full_base, &full_sys}) {
    double c_min = 1e9, c_max = -1e9;
    for (const auto& [l, b] : c->points) c_min = std::min(c_min, l), c_max = std::max(c_max, l);
    lo = std::max(lo, c_min);
    hi = std::min(hi, c_max);
  }
  ASSERT_LT(lo, hi);
  CurveCompareOptions o;
  o.at = {lo, 0.5 * (lo + hi), hi};
  o.n_samples = 300;
  o.seed = 99;
  auto r = compare_curves(base_settings, sys_settings, o);
  ASSERT_TRUE(r.ok()) << r.error().message();

  // The full-set values.
  for (size_t i = 0; i < base.size(); ++i) {
    EXPECT_NEAR(r->baseline_points[i].latency, full_base.points[i].first, 1e-12);
    EXPECT_NEAR(r->baseline_points[i].quality, full_base.points[i].second, 1e-9);
  }
  for (size_t a = 0; a < o.at.size(); ++a) {
    const auto b = brute_at(full_base, o.at[a]), s = brute_at(full_sys, o.at[a]);
    ASSERT_TRUE(b && s);
    EXPECT_NEAR(*r->at[a].diff, *s - *b, 1e-9);
  }

  // The resamples: the same indices (splitmix64, n bounded draws per resample, as eval/bootstrap.cpp).
  SplitMix64 rng(o.seed);
  std::vector<std::vector<double>> diffs(o.at.size());
  std::vector<int> base_out(o.at.size()), sys_out(o.at.size());
  for (int k = 0; k < o.n_samples; ++k) {
    std::vector<size_t> idx(n);
    for (auto& i : idx) i = static_cast<size_t>(rng.below(n));
    const BruteCurve cb = brute_curve(base, idx), cs = brute_curve(sys, idx);
    for (size_t a = 0; a < o.at.size(); ++a) {
      const auto b = brute_at(cb, o.at[a]), s = brute_at(cs, o.at[a]);
      base_out[a] += !b;
      sys_out[a] += !s;
      if (b && s) diffs[a].push_back(*s - *b);
    }
  }
  for (size_t a = 0; a < o.at.size(); ++a) {
    SCOPED_TRACE(a);
    const auto& d = r->at[a];
    auto v = diffs[a];
    ASSERT_EQ(d.n_valid, static_cast<int>(v.size()));
    EXPECT_EQ(d.n_out_of_range, o.n_samples - static_cast<int>(v.size()));
    EXPECT_EQ(d.n_baseline_out_of_range, base_out[a]);
    EXPECT_EQ(d.n_system_out_of_range, sys_out[a]);
    ASSERT_FALSE(v.empty());
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    // 95% percentile interval: the (m//40)-th smallest and largest of the m differences.
    const size_t cut = v.size() / 40;
    EXPECT_NEAR(*d.mean, mean, 1e-9);
    EXPECT_NEAR(*d.lower, v[cut], 1e-9);
    EXPECT_NEAR(*d.upper, v[v.size() - 1 - cut], 1e-9);
    EXPECT_EQ(d.excludes_zero, v[cut] > 0 || v[v.size() - 1 - cut] < 0);
  }
  // The targets at the shared range's ends are out of range in some resamples.
  EXPECT_GT(r->at[0].n_out_of_range, 0);
  EXPECT_GT(r->at[2].n_out_of_range, 0);
}

}  // namespace
}  // namespace gpstream::eval
