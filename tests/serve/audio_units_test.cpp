// AudioUnits (serve/audio_units.h): samples in any pieces → one unit per encoder chunk, whose rows are the
// whole-utterance encoder's (audio::log_mel + SpeechEncoderPass::forward, no streaming code) within float
// rounding, with chunk_ms per full chunk and 80 ms per row of the partial last one.
#include "serve/audio_units.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../testing/speech_encoder_bounds.h"
#include "audio/log_mel.h"
#include "speech_encoder/speech_encoder.h"

namespace gpstream::serve {
namespace {

speech_encoder::SpeechEncoderModel tiny_encoder() {
  speech_encoder::SpeechEncoderConfig c;
  c.conv_channels = 8;
  c.d_model = 8;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_ff = 12;
  c.chunk_frames = 6;  // 240 ms, 3 rows of 80 ms
  c.stack = 2;
  c.proj_hidden = 10;
  c.llm_hidden = 6;
  speech_encoder::SpeechEncoderModel m(c);
  m.init_random(5);
  return m;
}

TEST(AudioUnits, OneUnitPerChunkWithTheWholeUtteranceRows) {
  const speech_encoder::SpeechEncoderModel enc = tiny_encoder();
  // 200 log-mel frames: 50 encoder frames, 25 rows = 8 chunks of 3 rows + 1 row.
  std::vector<float> x(400 + 160 * 199);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.3f * std::sin(0.05f * static_cast<float>(i) * (1.0f + 1e-4f * i));
  const std::vector<float> mel = audio::log_mel(x);
  speech_encoder::SpeechEncoderPass pass(enc);
  const std::vector<float> want = pass.forward(mel.data(), 200);
  ASSERT_EQ(want.size(), 25u * 6u);

  auto units = AudioUnits::create(enc, 16000);
  ASSERT_TRUE(units.ok()) << units.error().message();
  EXPECT_EQ(units->chunk_ms(), 240.0);
  EXPECT_EQ(units->row_ms(), 80.0);
  std::vector<AudioUnit> got;
  for (size_t i = 0; i < x.size(); i += 777) {
    const size_t before = got.size();
    units->push({x.data() + i, std::min<size_t>(777, x.size() - i)}, got);
    for (size_t u = before; u < got.size(); ++u)
      EXPECT_EQ(got[u].n_rows, 3);  // only whole chunks before the end
  }
  units->finish(got);
  ASSERT_EQ(got.size(), 9u);
  std::vector<float> rows;
  for (size_t u = 0; u < got.size(); ++u) {
    const int n = u < 8 ? 3 : 1;
    EXPECT_EQ(got[u].n_rows, n);
    EXPECT_EQ(got[u].rows.size(), static_cast<size_t>(n) * 6u);
    EXPECT_EQ(got[u].duration_ms, 80.0 * n);
    rows.insert(rows.end(), got[u].rows.begin(), got[u].rows.end());
  }
  ASSERT_EQ(rows.size(), want.size());
  // At 16 kHz the resampler is the identity and LogMelStream gives log_mel()'s frames bit for bit
  // (tests/audio/log_mel_test.cpp), so the rows differ only as two fp32 forwards of the encoder that sum in
  // other orders (the chunked stream against the whole-utterance pass): speech_encoder_forward_bound.
  const double tol = testing::speech_encoder_forward_bound(enc, {.n_frames = 200}).out;
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_NEAR(rows[i], want[i], tol) << i;
}

// The two-phase path the engine takes (feed, one encode over several streams, take_units) gives each stream
// the units push() gives it alone: as many, as long, in order, and their rows within the bound of two fp32
// forwards that sum in other orders (speech_encoder_stream.h, run_ready_chunks).
TEST(AudioUnits, EncodedTogetherEqualsPushedAlone) {
  const speech_encoder::SpeechEncoderModel enc = tiny_encoder();
  std::vector<std::vector<float>> signals;
  for (size_t len : {size_t{32000}, size_t{20000}, size_t{9001}}) {
    std::vector<float> x(len);
    for (size_t i = 0; i < len; ++i)
      x[i] = 0.3f * std::sin(0.03f * static_cast<float>(i) * (1.0f + 1e-4f * len));
    signals.push_back(std::move(x));
  }
  const size_t S = signals.size();
  std::vector<std::vector<AudioUnit>> alone(S), together(S);
  std::vector<AudioUnits> units;
  for (size_t s = 0; s < S; ++s) {
    auto a = AudioUnits::create(enc, 16000);
    ASSERT_TRUE(a.ok());
    for (size_t i = 0; i < signals[s].size(); i += 1000)
      a->push({signals[s].data() + i, std::min<size_t>(1000, signals[s].size() - i)}, alone[s]);
    a->finish(alone[s]);
    auto b = AudioUnits::create(enc, 16000);
    ASSERT_TRUE(b.ok());
    units.push_back(std::move(*b));
  }
  for (size_t i = 0; i < 32000; i += 1000 + 500) {  // the streams end at different rounds
    std::vector<AudioUnits*> encoding;
    std::vector<int64_t> ready;
    for (size_t s = 0; s < S; ++s) {
      if (i >= signals[s].size()) continue;
      units[s].feed({signals[s].data() + i, std::min<size_t>(1500, signals[s].size() - i)});
      encoding.push_back(&units[s]);
    }
    for (AudioUnits* a : encoding) ready.push_back(a->chunks_ready());
    AudioUnits::encode_ready(encoding);
    for (size_t k = 0; k < encoding.size(); ++k) {
      EXPECT_EQ(encoding[k]->chunks_ready(), 0);
      const size_t s = static_cast<size_t>(&*encoding[k] - units.data());
      const size_t before = together[s].size();
      encoding[k]->take_units(together[s], static_cast<size_t>(ready[k]));
      EXPECT_EQ(together[s].size() - before, static_cast<size_t>(ready[k]));
    }
  }
  const double tol = testing::speech_encoder_forward_bound(enc, {.n_frames = 200}).out;
  for (size_t s = 0; s < S; ++s) {
    units[s].finish(together[s]);
    ASSERT_EQ(together[s].size(), alone[s].size()) << s;
    for (size_t u = 0; u < alone[s].size(); ++u) {
      EXPECT_EQ(together[s][u].n_rows, alone[s][u].n_rows);
      EXPECT_EQ(together[s][u].duration_ms, alone[s][u].duration_ms);
      ASSERT_EQ(together[s][u].rows.size(), alone[s][u].rows.size());
      for (size_t i = 0; i < alone[s][u].rows.size(); ++i)
        EXPECT_NEAR(together[s][u].rows[i], alone[s][u].rows[i], tol) << s << " " << u << " " << i;
    }
  }
}

// Segmentation at pauses (continuous streams): x1 (frame-aligned), a second of zeros, x2. By the pause rules
// (audio/pause_detector.h defaults, no lead): segment 1 is x1 and the 50 quiet frames (8,000 samples) that
// end it, its last unit marked; the next 50 quiet frames are skipped, their 500 ms added to segment 2's first
// unit; segment 2 is x2, ended by finish(). Each segment's units are those of an unsegmented AudioUnits given
// that segment alone (rows within the two-forwards bound), in pieces of any size.
TEST(AudioUnits, SegmentsAtPausesAreUtterancesOfTheirOwn) {
  const speech_encoder::SpeechEncoderModel enc = tiny_encoder();
  auto tone = [](size_t n, float w) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = 0.3f * std::sin(w * static_cast<float>(i));
    return x;
  };
  const std::vector<float> x1 = tone(160 * 150, 0.05f), x2 = tone(9001, 0.07f);
  std::vector<float> recording = x1;
  recording.insert(recording.end(), 16000, 0.0f);
  recording.insert(recording.end(), x2.begin(), x2.end());

  auto alone = [&](std::vector<float> x) {
    auto a = AudioUnits::create(enc, 16000);
    EXPECT_TRUE(a.ok());
    std::vector<AudioUnit> out;
    a->push(x, out);
    a->finish(out);
    return out;
  };
  std::vector<float> seg1 = x1;
  seg1.insert(seg1.end(), 8000, 0.0f);
  std::vector<AudioUnit> want = alone(seg1);
  want.back().ends_segment = true;
  std::vector<AudioUnit> want2 = alone(x2);
  want2.front().duration_ms += 500.0;
  want.insert(want.end(), want2.begin(), want2.end());

  const double tol = testing::speech_encoder_forward_bound(enc, {.n_frames = 200}).out;
  for (size_t piece : {recording.size(), size_t{160}, size_t{1001}}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    auto a = AudioUnits::create(enc, 16000, /*segment_at_pauses=*/true);
    ASSERT_TRUE(a.ok());
    std::vector<AudioUnit> got;
    for (size_t i = 0; i < recording.size(); i += piece)
      a->push({recording.data() + i, std::min(piece, recording.size() - i)}, got);
    a->finish(got);
    // A segment whose rows were all given out before its end is marked by a unit with no rows.
    std::vector<AudioUnit> merged;
    for (auto& u : got) {
      if (u.n_rows == 0 && u.ends_segment && !merged.empty()) {
        merged.back().ends_segment = true;
        continue;
      }
      merged.push_back(u);
    }
    ASSERT_EQ(merged.size(), want.size());
    for (size_t u = 0; u < want.size(); ++u) {
      EXPECT_EQ(merged[u].n_rows, want[u].n_rows) << u;
      EXPECT_EQ(merged[u].duration_ms, want[u].duration_ms) << u;
      EXPECT_EQ(merged[u].ends_segment, want[u].ends_segment) << u;
      ASSERT_EQ(merged[u].rows.size(), want[u].rows.size()) << u;
      for (size_t i = 0; i < want[u].rows.size(); ++i) EXPECT_NEAR(merged[u].rows[i], want[u].rows[i], tol);
    }
  }
}

// The engine's way (feed a slice, encode, take_units of the chunks that slice made ready): a segment ends
// while the audio goes on, not only at finish() — a live stream's first segment must not wait for its end.
TEST(AudioUnits, ASegmentEndsWhileTheStreamGoesOn) {
  const speech_encoder::SpeechEncoderModel enc = tiny_encoder();
  std::vector<float> recording(160 * 150);
  for (size_t i = 0; i < recording.size(); ++i) recording[i] = 0.3f * std::sin(0.05f * static_cast<float>(i));
  recording.insert(recording.end(), 16000, 0.0f);  // 1 s of silence: the segment ends 500 ms into it
  const size_t speech2 = recording.size();
  for (size_t i = 0; i < 16000; ++i) recording.push_back(0.3f * std::sin(0.07f * static_cast<float>(i)));
  auto a = AudioUnits::create(enc, 16000, /*segment_at_pauses=*/true);
  ASSERT_TRUE(a.ok());
  std::vector<AudioUnit> got;
  size_t ended_at = 0;  // samples fed when the first segment's end came out
  for (size_t i = 0; i < recording.size(); i += 1000) {
    a->feed({recording.data() + i, std::min<size_t>(1000, recording.size() - i)});
    const int64_t ready = a->chunks_ready();
    AudioUnits* self = &*a;
    AudioUnits::encode_ready(std::span<AudioUnits* const>(&self, 1));
    a->take_units(got, static_cast<size_t>(ready));
    for (const auto& u : got)
      if (u.ends_segment && ended_at == 0) ended_at = std::min(i + 1000, recording.size());
  }
  EXPECT_GT(ended_at, 0u) << "the first segment ended only at finish()";
  EXPECT_LE(ended_at, speech2 + 1000) << "it ends where its pause is, before the second stretch of speech";
  const size_t before_finish = got.size();
  a->finish(got);
  EXPECT_GT(before_finish, 0u);
}

TEST(AudioUnits, RefusesRatesAndEncodersItCannotServe) {
  const speech_encoder::SpeechEncoderModel enc = tiny_encoder();
  EXPECT_FALSE(AudioUnits::create(enc, 0).ok());
  speech_encoder::SpeechEncoderConfig c = enc.config();
  c.n_mels = 40;
  const speech_encoder::SpeechEncoderModel other(c);
  auto r = AudioUnits::create(other, 16000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("40 mel bins"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace gpstream::serve
