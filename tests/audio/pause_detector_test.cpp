// PauseDetector frame by frame, every expectation counted by hand from the defaults (quiet below −40 dBFS,
// a pause of 500 ms = 50 frames once a segment has 1000 ms = 100 frames; past 20 s = 2000 frames a 100 ms =
// 10-frame gap; 3000 frames at most; no lead) or, where a lead is tested, a 200 ms = 20-frame lead.
#include "audio/pause_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpstream::audio {
namespace {

constexpr size_t kF = PauseDetector::kFrameSamples;

PauseOptions with_lead() {
  PauseOptions o;
  o.lead_ms = 200;
  return o;
}

std::vector<FrameAction> run(PauseDetector& d, const std::vector<bool>& loud) {
  std::vector<FrameAction> out;
  const std::vector<float> on(kF, 0.1f), off(kF, 0.0f);
  for (bool l : loud) out.push_back(d.frame(l ? on.data() : off.data(), kF));
  return out;
}

std::vector<bool> pattern(std::initializer_list<std::pair<bool, int>> runs) {
  std::vector<bool> v;
  for (auto [loud, n] : runs) v.insert(v.end(), static_cast<size_t>(n), loud);
  return v;
}

TEST(PauseDetector, LevelIsRmsInDbfs) {
  // RMS v: 20·log10(v) dBFS (v = 0.1f, about −20). The mean square is a double sum of 160 equal squares:
  // relative error ≤ 160 · 2⁻⁵³ ≈ 2e-14, i.e. 10·log10(e) · 2e-14 ≈ 1e-13 dB; 1e-12 allows that tenfold.
  const std::vector<float> x(kF, 0.1f);
  EXPECT_NEAR(PauseDetector::level_dbfs(x.data(), x.size()), 20.0 * std::log10(static_cast<double>(0.1f)),
              1e-12);
  const std::vector<float> z(kF, 0.0f);
  EXPECT_TRUE(std::isinf(PauseDetector::level_dbfs(z.data(), z.size())));
  // A frame half v and half 0: mean square v²/2, 3.0103 dB below.
  std::vector<float> h(kF, 0.0f);
  for (size_t i = 0; i < kF / 2; ++i) h[i] = 0.1f;
  const double v = 0.1f;
  EXPECT_NEAR(PauseDetector::level_dbfs(h.data(), h.size()), 10.0 * std::log10(v * v / 2), 1e-12);
}

TEST(PauseDetector, SegmentsStartWithTheirLeadAndEndAfterAPause) {
  PauseDetector d(with_lead());
  // 30 quiet, 150 loud, 60 quiet, 50 loud frames.
  const auto a = run(d, pattern({{false, 30}, {true, 150}, {false, 60}, {true, 50}}));
  for (int i = 0; i < 30; ++i) EXPECT_EQ(a[i], FrameAction::Hold) << i;
  EXPECT_EQ(a[30], FrameAction::StartSegment);
  for (int i = 31; i < 229; ++i) EXPECT_EQ(a[i], FrameAction::Continue) << i;
  // The 50th quiet frame in a row (frame 180 + 49) ends it; the segment then holds 20 + 150 + 50 ≥ 100.
  EXPECT_EQ(a[229], FrameAction::EndSegment);
  for (int i = 230; i < 240; ++i) EXPECT_EQ(a[i], FrameAction::Hold) << i;
  EXPECT_EQ(a[240], FrameAction::StartSegment);
  for (int i = 241; i < 290; ++i) EXPECT_EQ(a[i], FrameAction::Continue) << i;
  EXPECT_TRUE(d.in_segment());
  EXPECT_EQ(d.segment_start(), 230u * kF) << "the lead: the 10 quiet frames since the last segment";
  EXPECT_EQ(d.samples(), 290u * kF);
}

TEST(PauseDetector, TheLeadIsTakenAtTheStart) {
  PauseDetector d(with_lead());
  run(d, pattern({{false, 30}}));
  const auto a = run(d, pattern({{true, 1}}));
  EXPECT_EQ(a[0], FrameAction::StartSegment);
  EXPECT_EQ(d.segment_start(), 10u * kF);
  EXPECT_EQ(d.take_lead().size(), 20u * kF);
  EXPECT_EQ(d.take_lead().size(), 0u);
}

TEST(PauseDetector, AShortSegmentNeedsItsMinimumBeforeAPause) {
  PauseDetector d;
  // 10 loud then quiet: the segment reaches 100 frames at frame 99, with 90 quiet in a row (≥ 50).
  const auto a = run(d, pattern({{true, 10}, {false, 100}}));
  for (int i = 1; i < 99; ++i) EXPECT_EQ(a[i], FrameAction::Continue) << i;
  EXPECT_EQ(a[99], FrameAction::EndSegment);
}

TEST(PauseDetector, LongSegmentsEndAtAGapOrAtTheHardLimit) {
  PauseDetector d;
  // 2100 loud frames, then a 10-frame gap: past 2000 frames a 10-frame gap ends it (frame 2109).
  auto a = run(d, pattern({{true, 2100}, {false, 10}}));
  EXPECT_EQ(a[2108], FrameAction::Continue);
  EXPECT_EQ(a[2109], FrameAction::EndSegment);
  // No pause at all: the 3000th frame of the segment ends it.
  PauseDetector e;
  a = run(e, pattern({{true, 3001}}));
  EXPECT_EQ(a[2998], FrameAction::Continue);
  EXPECT_EQ(a[2999], FrameAction::EndSegment);
  EXPECT_EQ(a[3000], FrameAction::StartSegment);
}

TEST(PauseDetector, SilenceBetweenSegmentsIsNotKeptBeyondTheLead) {
  PauseDetector d;  // no lead
  const auto a = run(d, pattern({{false, 5}, {true, 1}}));
  EXPECT_EQ(a[0], FrameAction::Skip);
  EXPECT_EQ(a[5], FrameAction::StartSegment);
  EXPECT_EQ(d.segment_start(), 5u * kF);
}

}  // namespace
}  // namespace gpstream::audio
