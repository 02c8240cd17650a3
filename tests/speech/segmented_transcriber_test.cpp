// SegmentedTranscriber on a tiny random speech model: a recording of two utterances with a second of
// silence between them gives exactly the words of each segment transcribed alone by a SpeechTranscriber
// (segments counted by hand from the pause rules), the second's delays shifted by its start; the result does
// not depend on how the samples are split into push() calls; silence alone starts no segment.
#include "speech/segmented_transcriber.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../testing/tiny_speech_suite.h"

namespace gpstream::speech {
namespace {

// A loud gliding tone (RMS about −13 dBFS: every 10 ms frame is loud).
std::vector<float> tone(size_t n, double f0) {
  std::vector<float> s(n);
  double phase = 0;
  for (size_t i = 0; i < n; ++i) {
    phase += 2 * M_PI * (f0 + 1500.0 * static_cast<double>(i) / 16000.0) / 16000.0;
    s[i] = static_cast<float>(0.3 * std::sin(phase));
  }
  return s;
}

std::vector<float> cat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

using Segmented = gpstream::testing::TinySpeechSuite;

std::vector<TranscribedWord> alone(SpeechModel& m, const stream::SessionOptions& so,
                                   const std::vector<float>& a) {
  auto t = SpeechTranscriber::create(m, so);
  EXPECT_TRUE(t.ok());
  std::vector<TranscribedWord> out;
  EXPECT_TRUE((*t)->push(a.data(), a.size(), out).ok());
  EXPECT_TRUE((*t)->finish(out).ok());
  return out;
}

TEST_F(Segmented, TwoUtterancesAreTwoSegmentsTranscribedAlone) {
  const auto a = tone(17920, 200.0);  // 112 frames
  const auto b = tone(20800, 300.0);  // 130 frames
  const std::vector<float> second(16000, 0.0f), tail(9600, 0.0f);
  const auto recording = cat({a, second, b, tail});
  // By hand (pause_detector.h's defaults with a 200 ms lead): segment 1 starts at frame 0 (nothing before it
  // to lead) and ends with the 50th quiet frame after a: a + 8,000 zeros. The next 50 quiet frames are held,
  // the last 20 of them (3,200 samples) lead segment 2, which starts at frame 112 + 100 − 20 = 192 (30,720
  // samples = 1,920 ms) and ends 50 quiet frames after b: 3,200 zeros + b + 8,000 zeros. The last 10 frames
  // are held and dropped at the end.
  const std::vector<float> pause(8000, 0.0f), lead(3200, 0.0f);
  const auto want1 = alone(*model_, options(), cat({a, pause}));
  auto want2 = alone(*model_, options(), cat({lead, b, pause}));
  ASSERT_FALSE(want1.empty());
  ASSERT_FALSE(want2.empty());
  for (auto& w : want2) w.delay_ms += 1920.0;
  std::vector<TranscribedWord> want = want1;
  want.insert(want.end(), want2.begin(), want2.end());

  audio::PauseOptions pauses;
  pauses.lead_ms = 200;
  auto t = SegmentedTranscriber::create(*model_, options(), pauses);
  ASSERT_TRUE(t.ok()) << t.error().message();
  for (size_t piece : {recording.size(), size_t{1}, size_t{160}, size_t{1001}}) {
    ASSERT_TRUE((*t)->reset().ok());
    std::vector<TranscribedWord> got;
    for (size_t i = 0; i < recording.size(); i += piece)
      ASSERT_TRUE((*t)->push(recording.data() + i, std::min(piece, recording.size() - i), got).ok());
    ASSERT_TRUE((*t)->finish(got).ok());
    EXPECT_EQ((*t)->segments(), 2u) << "piece " << piece;
    ASSERT_EQ(got.size(), want.size()) << "piece " << piece;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].text, want[i].text) << "piece " << piece << " word " << i;
      EXPECT_EQ(got[i].chunks, want[i].chunks) << "piece " << piece << " word " << i;
      EXPECT_EQ(got[i].delay_ms, want[i].delay_ms) << "piece " << piece << " word " << i;
      EXPECT_GE(got[i].elapsed_ms, got[i].delay_ms);
    }
  }
}

TEST_F(Segmented, SilenceAloneStartsNoSegmentAndTakesNoMemory) {
  auto t = SegmentedTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok());
  const std::vector<float> second(16000, 0.0f);
  std::vector<TranscribedWord> got;
  for (int s = 0; s < 600; ++s) ASSERT_TRUE((*t)->push(second.data(), second.size(), got).ok());
  ASSERT_TRUE((*t)->finish(got).ok());
  EXPECT_EQ((*t)->segments(), 0u);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ((*t)->audio_ms(), 600000.0);
}

TEST_F(Segmented, ARecordingWithNoPauseIsCutAtTheHardLimit) {
  audio::PauseOptions p;
  p.max_segment_ms = 1000;  // hard limit 1.5 s = 150 frames
  auto t = SegmentedTranscriber::create(*model_, options(), p);
  ASSERT_TRUE(t.ok());
  const auto a = tone(64000, 200.0);  // 4 s, 400 frames, all loud: segments of 150, 150 and 100 frames
  std::vector<TranscribedWord> got;
  ASSERT_TRUE((*t)->push(a.data(), a.size(), got).ok());
  ASSERT_TRUE((*t)->finish(got).ok());
  EXPECT_EQ((*t)->segments(), 3u);
  // Segment 3 starts at 3 s: its words come no earlier.
  const auto third = alone(*model_, options(), std::vector<float>(a.begin() + 48000, a.end()));
  ASSERT_GE(got.size(), third.size());
  for (size_t i = 0; i < third.size(); ++i) {
    const auto& g = got[got.size() - third.size() + i];
    EXPECT_EQ(g.text, third[i].text);
    EXPECT_EQ(g.delay_ms, third[i].delay_ms + 3000.0);
  }
}

}  // namespace
}  // namespace gpstream::speech
