// Speech-input latency (SimulEval's speech-to-text evaluator, metrics.md A.1–A.3): the source clock
// (segment sizes, delays and |X| in ms, checked against CPython's arithmetic), hand-derived AL, LAAL,
// AP and DAL with their computation-aware variants, agreement with the text metrics where they coincide
// (every source word lasting W ms), and scoring of speech logs with their validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "eval/latency.h"
#include "eval/speech_clock.h"
#include "eval/speech_scores.h"

namespace gpstream::eval {
namespace {

// math.ceil(seg / 1000 * sr) and n * 1000 / sr as CPython 3.11 prints them.
TEST(SpeechClock, SegmentSizesLikeSimulEval) {
  struct Case {
    double seg_ms, rate;
    int64_t samples;
    double ms;
  };
  for (const Case& c :
       {Case{10, 16000, 160, 10.0}, Case{320, 16000, 5120, 320.0}, Case{10, 22050, 221, 10.022675736961451},
        Case{30, 44100, 1323, 30.0}, Case{1, 8000, 8, 1.0}, Case{0.5, 16000, 8, 0.5}}) {
    auto clock = SpeechSourceClock::create(c.rate, 100000, c.seg_ms);
    ASSERT_TRUE(clock.ok());
    EXPECT_EQ(clock->samples_per_segment(), c.samples) << c.seg_ms << " ms at " << c.rate;
    clock->advance();
    EXPECT_DOUBLE_EQ(clock->delay_ms(), c.ms) << c.seg_ms << " ms at " << c.rate;
  }
}

// 1 s of 16 kHz audio in 320 ms segments: delays 320, 640, 960, then the short last segment → 1000 = |X|.
TEST(SpeechClock, WalksTheAudio) {
  auto clock = *SpeechSourceClock::create(16000, 16000, 320);
  EXPECT_DOUBLE_EQ(clock.source_length_ms(), 1000.0);
  std::vector<double> delays;
  std::vector<int64_t> sizes;
  while (!clock.finished()) {
    sizes.push_back(clock.advance());
    delays.push_back(clock.delay_ms());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{5120, 5120, 5120, 640}));
  EXPECT_EQ(delays, (std::vector<double>{320, 640, 960, 1000}));
  EXPECT_EQ(clock.advance(), 0);
  EXPECT_DOUBLE_EQ(clock.elapsed_ms(37.5), 1037.5);
  EXPECT_FALSE(SpeechSourceClock::create(0, 10, 10).ok());
  EXPECT_FALSE(SpeechSourceClock::create(16000, 10, 0).ok());
  EXPECT_FALSE(SpeechSourceClock::create(16000, 10, 5e-324).ok());  // ÷1000 underflows to 0 samples
  EXPECT_EQ(SpeechSourceClock::create(16000, 10, 1e-300)->samples_per_segment(), 1);  // ceil: one sample
  EXPECT_FALSE(SpeechSourceClock::create(16000, -1, 10).ok());
}

// Hand derivation, |X| = 2000 ms (segments of 500 ms), 4 words, reference of 5 words:
//   delays  500, 1000, 2000, 2000;  elapsed 620, 1180, 2300, 2300.
// AL (γ = 5/2000, 1/γ = 400): 500 + (1000−400) + (2000−800) [τ = 3, d₃ ≥ |X|] = 2300 / 3 = 766.667.
// LAAL: γ = max(4, 5)/2000 → the same 766.667.  AL without the reference (1/γ = 500): 500+500+1000 → 666.667.
// AP: (500+1000+2000+2000) / (2000·5) = 0.55.
// DAL (1/γ = 2000/4 = 500): g' = 500, 1000, 2000, 2500 → 500 + 500 + 1000 + 1000 = 3000 / 4 = 750.
// _CA over elapsed: AL 620 + 780 + 1500 = 2900/3 = 966.667 (LAAL the same); AP 6400/10000 = 0.64;
//   DAL g' = 620, 1180, 2300, 2800 → 620 + 680 + 1300 + 1300 = 3900/4 = 975.
InstanceRecord hand_record() {
  InstanceRecord r;
  r.index = 0;
  r.prediction = "a b c d";
  r.delays = {500, 1000, 2000, 2000};
  r.delays_int = false;
  r.elapsed = {620, 1180, 2300, 2300};
  r.elapsed_int = false;
  r.prediction_length = 4;
  r.reference = "a b c d e";
  r.source_length = 2000;
  r.source_length_int = false;
  return r;
}

TEST(SpeechLatency, HandDerivedEachMetric) {
  const auto r = hand_record();
  EXPECT_NEAR(latency_al(r.delays, 2000, 5), 2300.0 / 3, 1e-9);
  EXPECT_NEAR(latency_al(r.delays, 2000, 4), 2000.0 / 3, 1e-9);
  EXPECT_NEAR(latency_laal(r.delays, 2000, 5), 2300.0 / 3, 1e-9);
  EXPECT_NEAR(latency_ap(r.delays, 2000, 5), 0.55, 1e-12);
  EXPECT_NEAR(latency_dal(r.delays, 2000, 5), 750.0, 1e-9);
  EXPECT_NEAR(latency_al(r.elapsed, 2000, 5), 2900.0 / 3, 1e-9);
  EXPECT_NEAR(latency_laal(r.elapsed, 2000, 5), 2900.0 / 3, 1e-9);
  EXPECT_NEAR(latency_ap(r.elapsed, 2000, 5), 0.64, 1e-12);
  EXPECT_NEAR(latency_dal(r.elapsed, 2000, 5), 975.0, 1e-9);

  SpeechScoreOptions o;
  o.metrics = {"AL", "LAAL", "AP", "DAL"};
  auto s = score_speech_instances({r}, o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::vector<std::pair<std::string, double>> want{
      {"WER", 20.0}, {"AL", 2300.0 / 3}, {"AL_CA", 2900.0 / 3}, {"LAAL", 2300.0 / 3}, {"LAAL_CA", 2900.0 / 3},
      {"AP", 0.55},  {"AP_CA", 0.64},    {"DAL", 750.0},        {"DAL_CA", 975.0}};
  ASSERT_EQ(s->scores.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s->scores[i].first, want[i].first);
    EXPECT_NEAR(s->scores[i].second.value, want[i].second, 1e-9) << want[i].first;
  }
  EXPECT_EQ(s->wer.deletions, 1);
}

// Where speech and text coincide: if every source word lasts W ms and each delay is the end of a word,
// speech AL/LAAL/DAL are W × the text values and AP is unchanged (|X| and Σd both scale by W). Checked on
// metrics.md's A.4 text vectors through compute_latency with both source types.
TEST(SpeechLatency, AgreesWithTextMetricsScaled) {
  struct Case {
    double src_words;
    std::vector<double> delays;
    std::string reference;
  };
  const std::vector<Case> cases{{5, {3, 4, 5, 5, 5}, "a b c d e"},
                                {4, {2, 2, 4, 4, 4, 4}, "a b c d"},
                                {6, {1, 3, 3, 6}, "a b c d e"},
                                {3, {2, 3, 3}, "a b c d"},
                                {4, {1, 2}, "a b"}};
  constexpr double kW = 320.0;
  std::vector<InstanceRecord> text, speech;
  for (size_t k = 0; k < cases.size(); ++k) {
    InstanceRecord t;
    t.index = static_cast<int64_t>(k);
    t.delays = cases[k].delays;
    t.reference = cases[k].reference;
    t.source_length = cases[k].src_words;
    text.push_back(t);
    for (auto& d : t.delays) d *= kW;
    t.elapsed = t.delays;
    t.source_length *= kW;
    speech.push_back(t);
  }
  LatencyOptions lt;
  lt.metrics = {"AL", "LAAL", "AP", "DAL"};
  LatencyOptions ls = lt;
  ls.source_type = SourceType::Speech;
  ls.computation_aware = true;
  auto a = compute_latency(text, lt);
  auto b = compute_latency(speech, ls);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(b->scores.size(), 2 * a->scores.size());
  for (size_t i = 0; i < a->scores.size(); ++i) {
    const auto& [name, tv] = a->scores[i];
    const double scale = name == "AP" ? 1.0 : kW;
    for (size_t ca = 0; ca < 2; ++ca) {
      const auto& [sname, sv] = b->scores[2 * i + ca];
      EXPECT_EQ(sname, ca ? name + "_CA" : name);
      EXPECT_NEAR(sv.value, tv.value * scale, 1e-9 * std::max(1.0, tv.value * scale)) << sname;
    }
  }
  // Spot values (metrics.md A.4 means over #1,#2,#3,#5,#6): AL text = (3 + 1.666667 + 1.45 + 2.125 + 0.5)/5.
  EXPECT_NEAR(a->scores[0].second.value, (3.0 + 5.0 / 3 + 1.45 + 2.125 + 0.5) / 5, 1e-9);
}

TEST(SpeechScores, ValidationNamesTheDefect) {
  auto expect_error = [](InstanceRecord r, const std::string& what, bool need_elapsed = true) {
    const auto st = validate_speech_instance(r, LatencyUnit::Word, need_elapsed);
    ASSERT_FALSE(st.ok()) << what;
    EXPECT_NE(st.error().message().find(what), std::string::npos) << st.error().message();
  };
  EXPECT_TRUE(validate_speech_instance(hand_record(), LatencyUnit::Word, true).ok());
  auto r = hand_record();
  r.reference.reset();
  expect_error(r, "no reference");
  r = hand_record();
  r.source_length = 0;
  expect_error(r, "source_length 0.0 ms");
  r.source_length = 1e12;
  expect_error(r, "not an audio duration");
  r = hand_record();
  r.prediction = "a b c";
  expect_error(r, "3 words but 4 delays");
  r = hand_record();
  r.delays[3] = 2500;
  expect_error(r, "delay 3 (2500.0 ms) is outside the audio");
  r = hand_record();
  r.delays[0] = -1;
  expect_error(r, "outside the audio");
  r = hand_record();
  r.delays[1] = 400;
  expect_error(r, "delays decrease at 1");
  r = hand_record();
  r.elapsed.pop_back();
  expect_error(r, "3 elapsed times for 4 delays");
  EXPECT_TRUE(validate_speech_instance(r, LatencyUnit::Word, false).ok());
  r = hand_record();
  r.elapsed[2] = 1900;
  expect_error(r, "elapsed 2 (1900.0 ms) is before its delay");
  r = hand_record();
  r.elapsed[0] = 400;
  expect_error(r, "elapsed 0 (400.0 ms) is before its delay (500.0 ms)");
  r = hand_record();
  r.elapsed = {620, 2400, 2300, 2300};
  expect_error(r, "elapsed times decrease at 2");
  // Char unit: one delay per non-space character.
  r = hand_record();
  r.prediction = "ab cd";
  EXPECT_TRUE(validate_speech_instance(r, LatencyUnit::Char, true).ok());
  // A delay a hair past |X| (float sums of segment durations) is tolerated.
  r = hand_record();
  r.delays[3] = 2000 + 1e-9;
  EXPECT_TRUE(validate_speech_instance(r, LatencyUnit::Word, true).ok());
}

TEST(SpeechScores, EmptyHypothesisSkippedFromLatencyNotWer) {
  auto a = hand_record();
  auto b = hand_record();
  b.index = 1;
  b.prediction = "";
  b.delays.clear();
  b.elapsed.clear();
  b.reference = "x y z";
  SpeechScoreOptions o;
  o.metrics = {"AL"};
  auto s = score_speech_instances({a, b}, o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  // WER: (1 D + 3 D) / (5 + 3) = 50 %; AL only from instance 0.
  EXPECT_DOUBLE_EQ(s->scores[0].second.value, 50.0);
  EXPECT_NEAR(s->scores[1].second.value, 2300.0 / 3, 1e-9);
  EXPECT_EQ(s->skipped, (std::vector<int64_t>{1}));
  EXPECT_FALSE(score_speech_instances({}, o).ok());
  // No output anywhere: WER 100 %, no latency columns, a warning, every instance skipped.
  auto none = score_speech_instances({b}, o);
  ASSERT_TRUE(none.ok()) << none.error().message();
  ASSERT_EQ(none->scores.size(), 1u);
  EXPECT_DOUBLE_EQ(none->scores[0].second.value, 100.0);
  EXPECT_EQ(none->skipped, (std::vector<int64_t>{1}));
  EXPECT_EQ(none->warnings.size(), 1u);
}

}  // namespace
}  // namespace gpstream::eval
