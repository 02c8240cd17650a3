// Latency tests: metrics.md A.4 vectors ([calc] and [ran] on SimulEval), the speech #4 and
// computation-aware examples, the --output (LogInstance) ATD quirk (A.5.1), hand derivations, and ATD
// against a line-by-line transcription of SimulEval's ATDScorer, then on 1,000,000 delays; the paper's
// lagging code (AL = LAAL over unit delays) by hand.
#include "eval/latency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "eval/unicode_text.h"

namespace gpstream::eval {
namespace {

struct TextCase {
  int id;
  double src_len;
  std::vector<double> delays;
  double ref_len;
  double al, al_noref, laal, ap, ap_noref, dal, atd, start, end;
};

class LatencyA4Test : public ::testing::TestWithParam<TextCase> {};

// Printed to 6 decimals in metrics.md → tolerance 1e-6.
TEST_P(LatencyA4Test, PerSentenceFormulas) {
  const auto& c = GetParam();
  const double hyp_len = static_cast<double>(c.delays.size());
  EXPECT_NEAR(latency_al(c.delays, c.src_len, c.ref_len), c.al, 1e-6) << "#" << c.id;
  EXPECT_NEAR(latency_al(c.delays, c.src_len, hyp_len), c.al_noref, 1e-6) << "#" << c.id;
  EXPECT_NEAR(latency_laal(c.delays, c.src_len, c.ref_len), c.laal, 1e-6) << "#" << c.id;
  EXPECT_NEAR(latency_ap(c.delays, c.src_len, c.ref_len), c.ap, 1e-6) << "#" << c.id;
  EXPECT_NEAR(latency_ap(c.delays, c.src_len, hyp_len), c.ap_noref, 1e-6) << "#" << c.id;
  EXPECT_NEAR(latency_dal(c.delays, c.src_len, c.ref_len), c.dal, 1e-6) << "#" << c.id;
  std::vector<double> zeros(c.delays.size(), 0.0);
  auto atd = latency_atd_text(c.delays, zeros);
  ASSERT_TRUE(atd.ok());
  EXPECT_NEAR(*atd, c.atd, 1e-6) << "#" << c.id;
  EXPECT_EQ(latency_start_offset(c.delays, c.src_len, c.ref_len), c.start);
  EXPECT_EQ(latency_end_offset(c.delays, c.src_len, c.ref_len), c.end);
  // A.5.1: via instances.log SimulEval takes ATD's speech branch, which gives 0.0 here [ran].
  auto atd_log = latency_atd_speech(c.delays, zeros);
  ASSERT_TRUE(atd_log.ok());
  EXPECT_NEAR(*atd_log, 0.0, 1e-12) << "#" << c.id;
}

INSTANTIATE_TEST_SUITE_P(
    MetricsMdA4, LatencyA4Test,
    ::testing::Values(
        TextCase{1, 5, {3, 4, 5, 5, 5}, 5, 3.0, 3.0, 3.0, 0.88, 0.88, 3.0, 3.0, 3, 0},
        TextCase{2, 4, {2, 2, 4, 4, 4, 4}, 4, 1.666667, 2.0, 2.0, 1.25, 0.833333, 2.444444, 2.5, 2, 0},
        TextCase{3, 6, {1, 3, 3, 6}, 5, 1.45, 1.0, 1.45, 0.433333, 0.541667, 1.375, 2.0, 1, 0},
        TextCase{5, 3, {2, 3, 3}, 4, 2.125, 2.0, 2.125, 0.666667, 0.888889, 2.0, 2.0, 2, 0},
        TextCase{6, 4, {1, 2}, 2, 0.5, 0.5, 0.5, 0.375, 0.375, 1.0, 1.0, 1, -2}));

TEST(LatencyA4, RtfAndNumChunks) {
  const std::vector<double> d{1, 2};
  EXPECT_DOUBLE_EQ(latency_rtf(d, 4, 2), 0.5);
  EXPECT_DOUBLE_EQ(latency_num_chunks(d, 4, 2), 2.0);
}

// Speech example #4 [calc, ran].
TEST(LatencyA4, SpeechExample4) {
  const std::vector<double> d{1000, 1500, 1500, 2500, 3000, 3000};
  EXPECT_NEAR(latency_al(d, 3000, 5), 700.0, 1e-9);
  EXPECT_NEAR(latency_al(d, 3000, 6), 900.0, 1e-9);
  EXPECT_NEAR(latency_laal(d, 3000, 5), 900.0, 1e-9);
  EXPECT_NEAR(latency_ap(d, 3000, 5), 0.833333, 1e-6);
  EXPECT_NEAR(latency_ap(d, 3000, 6), 0.694444, 1e-6);
  EXPECT_NEAR(latency_dal(d, 3000, 5), 1000.0, 1e-9);
  EXPECT_EQ(latency_start_offset(d, 3000, 5), 1000);
  EXPECT_EQ(latency_end_offset(d, 3000, 5), 0);
  auto atd = latency_atd_speech(d, std::vector<double>(d.size(), 0.0));
  ASSERT_TRUE(atd.ok());
  EXPECT_NEAR(*atd, 1150.0, 1e-9);
}

// Computation-aware example [ran]: the _CA metrics are the same formulas over elapsed.
TEST(LatencyA4, ComputationAwareExample) {
  const std::vector<double> delays{400, 800, 1000}, elapsed{600, 1100, 1300};
  EXPECT_NEAR(latency_al(elapsed, 1000, 3), 683.333, 1e-3);
  EXPECT_NEAR(latency_laal(elapsed, 1000, 3), 683.333, 1e-3);
  EXPECT_NEAR(latency_dal(elapsed, 1000, 3), 711.111, 1e-3);
  EXPECT_NEAR(latency_al(delays, 1000, 3), 400.0, 1e-9);
  // First-token rule: d_1 = 1500 > |X| = 1000 → AL = d_1.
  EXPECT_EQ(latency_al(std::vector<double>{1500, 1700}, 1000, 2), 1500.0);
}

// Hand derivation (A.3 ATD step 2, CA): delays 1,2 (text), elapsed−delays = 0.5, 1.5 → compute
// times 0.5, 1.0. E_1 = max(1,0)+1+0.5 = 2.5, E_2 = max(2,2.5)+1+1.0 = 4.5; s = 1, 2 → delays
// 1.5, 2.5 → ATD 2.0 (without CA: E = 2, 3 → 1, 1 → 1.0).
TEST(LatencyHand, AtdComputeTimes) {
  const std::vector<double> d{1, 2}, e{1.5, 3.5};
  const auto ct = atd_compute_times(d, e);
  ASSERT_EQ(ct.size(), 2u);
  EXPECT_DOUBLE_EQ(ct[0], 0.5);
  EXPECT_DOUBLE_EQ(ct[1], 1.0);
  EXPECT_DOUBLE_EQ(*latency_atd_text(d, ct), 2.0);
  EXPECT_DOUBLE_EQ(*latency_atd_text(d, std::vector<double>{0, 0}), 1.0);
  EXPECT_EQ(atd_compute_times(d, std::vector<double>{0, 0}), (std::vector<double>{0, 0}));
}

// Hand derivation: paced text (A.10) with 500 ms per word is vector #2 with every time ×500 →
// ATD 2.5 words = 1250 ms.
TEST(LatencyHand, AtdPacedTextScales) {
  std::vector<double> d{1000, 1000, 2000, 2000, 2000, 2000};
  auto v = latency_atd_text(d, std::vector<double>(6, 0.0), 500.0);
  ASSERT_TRUE(v.ok());
  EXPECT_NEAR(*v, 1250.0, 1e-9);
}

// Decreasing delays never come from SimulEval, but ATDScorer still computes something; so do we
// (hand: unique delays 3,1 → source chunks of 3 and −2 tokens, times 0..3; E = 4, 5; both target
// tokens map to source token 1 → (3 + 4)/2 = 3.5). A mapping outside the source is an error
// (Python would silently wrap a negative index).
TEST(LatencyErrors, AtdOddDelays) {
  auto v = latency_atd_text(std::vector<double>{3, 1}, std::vector<double>{0, 0});
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(*v, 3.5);
  EXPECT_FALSE(latency_atd_text(std::vector<double>{1, 2}, std::vector<double>{0}).ok());
  EXPECT_FALSE(latency_atd_text(std::vector<double>{1.5}, std::vector<double>{0}).ok());
  // Delays that would lay out billions of source slots (found by fuzzing: 2 GiB allocations) are refused,
  // also when reached by going up and down.
  EXPECT_FALSE(latency_atd_text(std::vector<double>{1e12}, std::vector<double>{0}).ok());
  EXPECT_FALSE(latency_atd_speech(std::vector<double>{1e15}, std::vector<double>{0}).ok());
  std::vector<double> zigzag;
  for (int i = 0; i < 200; ++i) zigzag.push_back(i % 2 ? 4e6 - i : i);
  EXPECT_FALSE(latency_atd_text(zigzag, std::vector<double>(zigzag.size(), 0.0)).ok());
  EXPECT_FALSE(latency_atd_text(std::vector<double>{1, std::nan("")}, std::vector<double>{0, 0}).ok());
}

// A.2: word length = len(reference.split(" ")), the "\n" stays attached, double spaces count;
// char length = len(reference.strip()) with spaces, in code points.
TEST(ReferenceLength, WordAndChar) {
  EXPECT_EQ(reference_length("a b c d e\n", LatencyUnit::Word), 5);
  EXPECT_EQ(reference_length("a  b\n", LatencyUnit::Word), 3);
  EXPECT_EQ(reference_length("\n", LatencyUnit::Word), 1);
  EXPECT_EQ(reference_length("ab c\n", LatencyUnit::Char), 4);
  EXPECT_EQ(reference_length("n\u00e9 \u6771\n", LatencyUnit::Char), 4);
}

InstanceRecord rec(int64_t index, std::vector<double> delays, double src_len,
                   std::optional<std::string> ref) {
  InstanceRecord r;
  r.index = index;
  r.delays = std::move(delays);
  r.elapsed.assign(r.delays.size(), 0.0);
  r.source_length = src_len;
  r.reference = std::move(ref);
  return r;
}

// Corpus means over A.4 #1 and #2 (hand: AL (3.0 + 1.666667)/2, LAAL (3+2)/2, AP (0.88+1.25)/2,
// DAL (3+2.444444)/2, ATD (3+2.5)/2), with a third instance without delays skipped and reported.
TEST(ComputeLatency, CorpusMeanAndSkipped) {
  std::vector<InstanceRecord> inst = {rec(0, {3, 4, 5, 5, 5}, 5, "a b c d e\n"),
                                      rec(1, {2, 2, 4, 4, 4, 4}, 4, "a b c d\n"), rec(2, {}, 3, "x y z\n")};
  LatencyOptions o;
  o.metrics = {"LAAL", "AL", "AP", "DAL", "ATD", "StartOffset", "EndOffset", "NumChunks", "RTF"};
  auto r = compute_latency(inst, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->scores.size(), 9u);
  EXPECT_EQ(r->scores[0].first, "LAAL");
  EXPECT_NEAR(r->scores[0].second.value, 2.5, 1e-12);
  EXPECT_NEAR(r->scores[1].second.value, (3.0 + 5.0 / 3.0) / 2, 1e-12);
  EXPECT_NEAR(r->scores[2].second.value, (0.88 + 1.25) / 2, 1e-12);
  EXPECT_NEAR(r->scores[3].second.value, (3.0 + 22.0 / 9.0) / 2, 1e-12);
  EXPECT_NEAR(r->scores[4].second.value, 2.75, 1e-12);
  // StartOffset mean of ints 3, 2 → 2.5 (float); EndOffset 0, 0 → int 0; NumChunks (5+6)/2 = 5.5.
  EXPECT_FALSE(r->scores[5].second.is_int);
  EXPECT_DOUBLE_EQ(r->scores[5].second.value, 2.5);
  EXPECT_TRUE(r->scores[6].second.is_int);
  EXPECT_DOUBLE_EQ(r->scores[7].second.value, 5.5);
  EXPECT_NEAR(r->scores[8].second.value, 1.0, 1e-12);
  EXPECT_EQ(r->skipped, (std::vector<int64_t>{2}));
  EXPECT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("2 instance has no delay information"), std::string::npos);
}

TEST(ComputeLatency, NoRefLenAndMissingReference) {
  // #2 without the reference length: AL 2.0, AP 0.833333 (A.4).
  std::vector<InstanceRecord> inst = {rec(0, {2, 2, 4, 4, 4, 4}, 4, "a b c d\n")};
  LatencyOptions o;
  o.metrics = {"AL", "AP"};
  o.use_ref_len = false;
  auto r = compute_latency(inst, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->scores[0].second.value, 2.0, 1e-12);
  EXPECT_NEAR(r->scores[1].second.value, 5.0 / 6.0, 1e-12);
  // No reference at all → hypothesis length, as SimulEval (`ins.reference is None`).
  inst[0].reference.reset();
  o.use_ref_len = true;
  auto r2 = compute_latency(inst, o);
  ASSERT_TRUE(r2.ok());
  EXPECT_NEAR(r2->scores[0].second.value, 2.0, 1e-12);
}

TEST(ComputeLatency, CharUnitAndLogQuirk) {
  // char unit: reference "ab cd\n" → strip → 5 chars. delays 1,1,2,2 (|Y*| 4), |X| 2:
  // AL γ = 5/2: τ = 3 (d_3 = 2 ≥ 2): (1−0)+(1−0.4)+(2−0.8) = 2.8 → /3.
  std::vector<InstanceRecord> inst = {rec(0, {1, 1, 2, 2}, 2, "ab cd\n")};
  LatencyOptions o;
  o.metrics = {"AL"};
  o.unit = LatencyUnit::Char;
  auto r = compute_latency(inst, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->scores[0].second.value, 2.8 / 3.0, 1e-12);
  // LogInstance counts the reference in words whatever the unit: 2 → γ = 1: (1)+(0)+(0) = 1 → 1/3.
  o.log_instance_quirks = true;
  auto q = compute_latency(inst, o);
  ASSERT_TRUE(q.ok());
  EXPECT_NEAR(q->scores[0].second.value, 1.0 / 3.0, 1e-12);
}

TEST(ComputeLatency, ComputationAware) {
  InstanceRecord r;
  r.index = 0;
  r.delays = {400, 800, 1000};
  r.elapsed = {600, 1100, 1300};
  r.delays_int = r.elapsed_int = false;
  r.source_length = 1000;
  r.reference = "a b c\n";
  LatencyOptions o;
  o.metrics = {"AL", "LAAL", "DAL"};
  o.computation_aware = true;
  // Text without a pace has no clock → error, as SimulEval's RuntimeError.
  EXPECT_FALSE(compute_latency({r}, o).ok());
  o.source_type = SourceType::Speech;
  auto res = compute_latency({r}, o);
  ASSERT_TRUE(res.ok()) << res.error().message();
  ASSERT_EQ(res->scores.size(), 6u);
  EXPECT_EQ(res->scores[1].first, "AL_CA");
  EXPECT_NEAR(res->scores[0].second.value, 400.0, 1e-9);
  EXPECT_NEAR(res->scores[1].second.value, 683.333, 1e-3);
  EXPECT_NEAR(res->scores[3].second.value, 683.333, 1e-3);
  EXPECT_NEAR(res->scores[5].second.value, 711.111, 1e-3);
}

TEST(ComputeLatency, Errors) {
  LatencyOptions o;
  o.metrics = {"XYZ"};
  EXPECT_FALSE(compute_latency({rec(0, {1}, 1, "a\n")}, o).ok());
  o.metrics = {"AL"};
  auto all_empty = compute_latency({rec(0, {}, 1, "a\n")}, o);
  ASSERT_FALSE(all_empty.ok());
  auto zero_src = compute_latency({rec(0, {0}, 0, "a\n")}, o);
  ASSERT_FALSE(zero_src.ok());
  EXPECT_NE(zero_src.error().message().find("instance 0"), std::string::npos);
}

// SimulEval's ATDScorer.__call__ and compute (latency_scorer.py) for text output, written out as the Python
// reads, slices summed again for every token: the oracle for latency_atd_text (speech_input false, 1-unit
// tokens) and latency_atd_speech (300 ms source tokens, 0-length target tokens). Non-decreasing delays only.
double reference_atd(const std::vector<double>& delays, const std::vector<double>& compute_times,
                     bool speech_input) {
  const double src_token_len = speech_input ? 300.0 : 1.0;
  const double tgt_token_len = speech_input ? 0.0 : 1.0;
  std::vector<double> src_sizes{0}, tgt_sizes{0}, src_time{0}, tgt_time{0};
  std::vector<size_t> tgt_chunk{0};
  std::vector<double> no_duplicate;  // sorted(set(delays), key=delays.index)
  for (double d : delays)
    if (std::find(no_duplicate.begin(), no_duplicate.end(), d) == no_duplicate.end())
      no_duplicate.push_back(d);
  for (size_t i = 0; i < delays.size(); ++i) {
    if (i == 0 || delays[i] != delays[i - 1])
      tgt_sizes.push_back(1);
    else
      tgt_sizes.back() += 1;
  }
  for (size_t i = 1; i < tgt_sizes.size(); ++i)
    for (int k = 0; k < static_cast<int>(tgt_sizes[i]); ++k) tgt_chunk.push_back(i);
  double prev = 0;
  for (double u : no_duplicate) {
    const double duration = u - prev;
    prev = u;
    std::vector<double> token_lens;
    if (speech_input) {  // divmod(duration, 300): whole tokens, then the rest
      const double num = std::floor(duration / src_token_len);
      token_lens.assign(static_cast<size_t>(num), src_token_len);
      if (duration - num * src_token_len != 0) token_lens.push_back(duration - num * src_token_len);
    } else {
      token_lens.assign(static_cast<size_t>(duration), src_token_len);
    }
    src_sizes.push_back(static_cast<double>(token_lens.size()));
    for (double len : token_lens) src_time.push_back(src_time.back() + len);
  }
  for (size_t i = 0; i < delays.size(); ++i)
    tgt_time.push_back(std::max(delays[i], tgt_time.back()) + tgt_token_len + compute_times[i]);
  auto sum_to = [](const std::vector<double>& v, size_t n) {  // sum(v[:n])
    double s = 0;
    for (size_t i = 0; i < std::min(n, v.size()); ++i) s += v[i];
    return s;
  };
  double total = 0;
  for (size_t t = 1; t < tgt_chunk.size(); ++t) {
    const size_t chunk = tgt_chunk[t];
    const double acc_x = sum_to(src_sizes, chunk), acc_y = sum_to(tgt_sizes, chunk);
    const double big_s = static_cast<double>(t) - std::max(0.0, acc_y - acc_x);
    const double current = sum_to(src_sizes, chunk + 1);
    const double s = big_s < current ? big_s : current;
    total += tgt_time[t] - src_time.at(static_cast<size_t>(s));
  }
  return total / static_cast<double>(tgt_chunk.size() - 1);
}

// Non-decreasing delays that mostly read 0, 1 or 2 words (now and then 5 at once) per target token: chunks of
// every size on both sides. Compute times are multiples of 1/8, so every sum above is exact.
void random_stream(size_t n, uint32_t seed, std::vector<double>* delays, std::vector<double>* compute) {
  std::mt19937 rng(seed);
  double d = 1;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = rng() % 16;
    d += r < 7 ? 0 : r < 12 ? 1 : r < 15 ? 2 : 5;
    delays->push_back(d);
    compute->push_back(static_cast<double>(rng() % 8) / 8.0);
  }
}

TEST(LatencyAtd, MatchesSimulEvalsAlgorithmOnRandomStreams) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<double> delays, compute;
    random_stream(3000, seed, &delays, &compute);
    const std::vector<double> zeros(delays.size(), 0.0);
    const std::vector<double>* compute_times[] = {&zeros, &compute};
    for (const auto* ct : compute_times) {
      auto text = latency_atd_text(delays, *ct);
      ASSERT_TRUE(text.ok()) << text.error().message();
      EXPECT_EQ(*text, reference_atd(delays, *ct, false)) << "seed " << seed;
      // The same stream in ms (paced text, 250 ms per word) is the word result × 250.
      std::vector<double> ms(delays), ct_ms(*ct);
      for (auto& x : ms) x *= 250;
      for (auto& x : ct_ms) x *= 250;
      auto paced = latency_atd_text(ms, ct_ms, 250.0);
      ASSERT_TRUE(paced.ok()) << paced.error().message();
      EXPECT_EQ(*paced, reference_atd(delays, *ct, false) * 250) << "seed " << seed;
      // Speech branch: delays in ms that are not multiples of 300, so chunks end in shorter tokens.
      std::vector<double> speech(delays);
      for (auto& x : speech) x *= 170;
      auto sp = latency_atd_speech(speech, *ct);
      ASSERT_TRUE(sp.ok()) << sp.error().message();
      EXPECT_EQ(*sp, reference_atd(speech, *ct, true)) << "seed " << seed;
    }
  }
}

// ATD in linear time: summing the chunk sizes before c again for every token, as SimulEval does, is
// quadratic (minutes here, past ctest's limit). Two target tokens per source word, 1,1,2,2,…,m,m:
// E_t = t + 1, the tokens of chunk c map to source token c, so their delays are c and c + 1 and
// ATD = Σ(2c + 1)/(2m) = (m + 2)/2 exactly; in the speech branch (word c read at 300c ms, tokens of length 0)
// every delay is 0.
TEST(LatencyAtd, LongStreamsScoreInLinearTime) {
  constexpr int64_t m = 500000;  // 1,000,000 delays
  std::vector<double> delays;
  for (int64_t c = 1; c <= m; ++c) delays.insert(delays.end(), 2, static_cast<double>(c));
  const std::vector<double> zeros(delays.size(), 0.0);
  auto text = latency_atd_text(delays, zeros);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, static_cast<double>(m + 2) / 2);
  for (auto& x : delays) x *= 300;
  auto speech = latency_atd_speech(delays, zeros);
  ASSERT_TRUE(speech.ok()) << speech.error().message();
  EXPECT_EQ(*speech, 0.0);
}

}  // namespace
}  // namespace gpstream::eval

namespace gpstream::eval {
namespace {

// The paper's lagging code (metrics.md A.9), by hand. Exact binary fractions where the sums allow; else
// a tolerance of 8 ulp of the sum's magnitude (a handful of additions of values ≤ 10).
constexpr double kPaperTol = 8 * 10 * 2.220446049250313e-16;

TEST(PaperLatency, HandDerivations) {
  // wait-2 over 3 words, 4 hypothesis words; the end marker is unit 4 = |X|: γ = 4/4;
  // (2−0) + (3−1) + (4−2), stop at d = |X| → 6/3 = 2 (SimulEval on the capped delays 2,3,3,3 with |X| = 3
  // and a 4-word reference: (2) + (3 − 0.75) → 2.125).
  auto a = latency_paper(std::vector<double>{2, 3, 4, 4}, 4, 4);
  EXPECT_EQ(a.al, 2.0);
  EXPECT_EQ(a.laal, 2.0);
  EXPECT_EQ(latency_al(std::vector<double>{2, 3, 3, 3}, 3, 4), 2.125);
  // A delay beyond |X| is passed over, not a stop: |X| 5, γ = 4/5: 1 + (2 − 2.5) + (5 − 3.75) = 1.75, τ = 4.
  auto c = latency_paper(std::vector<double>{1, 7, 2, 5}, 5, 4);
  EXPECT_NEAR(c.al, 1.75 / 4, kPaperTol);
  EXPECT_NEAR(c.laal, 1.75 / 4, kPaperTol);
  // More delays than hypothesis words: γ_AL = 2/3, γ_LAAL = 3/3:
  // AL (1) + (2 − 1.5) + (3 − 3) = 1.5 → 0.5; LAAL (1) + (2 − 1) + (3 − 2) = 3 → 1.
  auto d = latency_paper(std::vector<double>{1, 2, 3}, 3, 2);
  EXPECT_NEAR(d.al, 0.5, kPaperTol);
  EXPECT_NEAR(d.laal, 1.0, kPaperTol);
  // d_1 > |X|: d_1 for both.
  auto e = latency_paper(std::vector<double>{6, 6}, 5, 2);
  EXPECT_EQ(e.al, 6.0);
  EXPECT_EQ(e.laal, 6.0);
  // metrics.md A.4 #2 (|X| 4, delays 2,2,4,4,4,4): the paper's AL = SimulEval's AL without the reference
  // length = 2.0 (A.9), not SimulEval's 1.666667.
  auto f = latency_paper(std::vector<double>{2, 2, 4, 4, 4, 4}, 4, 6);
  EXPECT_NEAR(f.al, 2.0, kPaperTol);
  EXPECT_NEAR(f.laal, 2.0, kPaperTol);
}

InstanceRecord paper_record(int64_t index, const std::string& source, const std::string& prediction,
                            std::vector<double> delays, std::vector<double> unit_delays) {
  InstanceRecord r;
  r.index = index;
  r.source = source;
  r.prediction = prediction;
  r.prediction_length = static_cast<int64_t>(delays.size());
  r.delays = std::move(delays);
  r.unit_delays = std::move(unit_delays);
  r.source_length = static_cast<double>(python_split(source).size());
  r.reference = "a reference of six words here\n";
  return r;
}

TEST(PaperLatency, CorpusMeanFromUnitDelays) {
  // Sentence 1: 3 words, |X| 4, "a b c d" written at units 2,3,4,4 → 2 (above). Sentence 2: 2 words, |X| 3,
  // 3 words written at 1, 2, 3: γ = 3/3: (1) + (1) + (1) = 3 → 1. An empty hypothesis is left out.
  // sum / len = (2 + 1) / 2 = 1.5 for both (the reference length plays no part).
  std::vector<InstanceRecord> inst = {paper_record(0, "x y z", "a b c d", {2, 3, 3, 3}, {2, 3, 4, 4}),
                                      paper_record(1, "x y", "a b c", {1, 2, 2}, {1, 2, 3}),
                                      paper_record(2, "x", "", {}, {})};
  LatencyOptions o;
  o.definition = LatencyDefinition::Paper;
  o.metrics = {"AL", "LAAL"};
  auto r = compute_latency(inst, o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->scores.size(), 2u);
  EXPECT_EQ(r->scores[0].first, "AL");
  EXPECT_EQ(r->scores[0].second.value, 1.5);
  EXPECT_EQ(r->scores[1].second.value, 1.5);
  EXPECT_EQ(r->skipped, (std::vector<int64_t>{2}));
  // SimulEval's AL on the same log differs (reference length 6, capped delays).
  o.definition = LatencyDefinition::SimulEval;
  auto s = compute_latency(inst, o);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->scores[0].second.value, 1.5);
}

TEST(PaperLatency, RefusesWhatItCannotCompute) {
  std::vector<InstanceRecord> inst = {paper_record(0, "x y z", "a b c d", {2, 3, 3, 3}, {})};
  LatencyOptions o;
  o.definition = LatencyDefinition::Paper;
  o.metrics = {"AL"};
  auto r = compute_latency(inst, o);  // no unit_delays: a SimulEval or older log
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("unit_delays"), std::string::npos);
  inst[0].unit_delays = {2, 3, 4, 4};
  o.metrics = {"AL", "AP"};
  EXPECT_FALSE(compute_latency(inst, o).ok());
  o.metrics = {"AL"};
  o.computation_aware = true;
  o.text_word_ms = 400;
  EXPECT_FALSE(compute_latency(inst, o).ok());
  o.computation_aware = false;
  o.unit = LatencyUnit::Char;
  EXPECT_FALSE(compute_latency(inst, o).ok());
  EXPECT_TRUE(parse_latency_definition("paper").ok());
  EXPECT_FALSE(parse_latency_definition("Paper").ok());
}

}  // namespace
}  // namespace gpstream::eval
