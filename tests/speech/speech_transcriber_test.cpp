// SpeechTranscriber on a tiny random speech model: the words and delays do not depend on how the samples are
// split into push() calls; they equal a Session fed by hand with the whole-utterance encoder rows (log_mel +
// SpeechEncoderPass::forward, not the streaming path) cut into chunks, its delays read off SimulEval's clock
// (eval::SpeechSourceClock with one chunk per segment); delays are chunk multiples capped at the audio
// length.
#include "speech/speech_transcriber.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../testing/temp_dir.h"
#include "../testing/tiny_speech_suite.h"
#include "audio/log_mel.h"
#include "eval/speech_clock.h"
#include "speech_encoder/speech_encoder.h"

namespace gpstream::speech {
namespace {

// Deterministic test audio: a gliding tone, a steady tone and seeded noise at ordinary levels.
std::vector<float> test_audio(size_t n, uint64_t seed) {
  std::vector<float> s(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  double phase = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / 16000.0;
    phase += 2 * M_PI * (200.0 + 1500.0 * t) / 16000.0;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const double noise = static_cast<double>(x >> 11) / 9007199254740992.0 - 0.5;
    s[i] = static_cast<float>(0.3 * std::sin(phase) + 0.1 * std::sin(2 * M_PI * 440.0 * t) + 0.05 * noise);
  }
  return s;
}

class Transcriber : public gpstream::testing::TinySpeechSuite {
 protected:
  // Runs one utterance through a transcriber in pieces of `piece` samples (0: all at once).
  static std::vector<TranscribedWord> transcribe(SpeechTranscriber& t, const std::vector<float>& audio,
                                                 size_t piece) {
    EXPECT_TRUE(t.reset().ok());
    std::vector<TranscribedWord> out;
    const size_t step = piece ? piece : audio.size();
    for (size_t i = 0; i < audio.size(); i += step) {
      Status st = t.push(audio.data() + i, std::min(step, audio.size() - i), out);
      EXPECT_TRUE(st.ok()) << st.error().message();
    }
    Status st = t.finish(out);
    EXPECT_TRUE(st.ok()) << st.error().message();
    EXPECT_EQ(out.size(), t.words().size());
    return out;
  }
};

// 18,000 samples: 111 log-mel frames, 27 encoder frames = 6 whole chunks + a tail of 1 row, 1125 ms.
// 20,800 samples: 128 frames, 32 encoder frames = 8 whole chunks, no tail rows, 1300 ms (8 chunks = 1280 ms).
const size_t kLengths[] = {18000, 20800};

TEST_F(Transcriber, ModelAndChunkSizes) {
  EXPECT_EQ(model_->chunk_ms(), 160.0);
  auto t = SpeechTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ((*t)->samples_per_chunk(), 2560);
  EXPECT_EQ((*t)->chunk_ms(), 160.0);
}

TEST_F(Transcriber, PieceSizesGiveTheSameWordsAndDelays) {
  auto t = SpeechTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok()) << t.error().message();
  for (size_t n : kLengths) {
    const auto audio = test_audio(n, n);
    const auto ref = transcribe(**t, audio, 0);
    ASSERT_GE(ref.size(), 3u) << "the tiny model should write several words";
    // Several distinct delays: words are written while audio is still arriving.
    std::vector<double> distinct;
    for (const auto& w : ref) distinct.push_back(w.delay_ms);
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    EXPECT_GE(distinct.size(), 2u);
    for (size_t piece : {size_t{1}, size_t{160}, size_t{1001}}) {
      const auto got = transcribe(**t, audio, piece);
      ASSERT_EQ(got.size(), ref.size()) << "piece " << piece;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].text, ref[i].text) << "piece " << piece << " word " << i;
        EXPECT_EQ(got[i].chunks, ref[i].chunks) << "piece " << piece << " word " << i;
        EXPECT_EQ(got[i].delay_ms, ref[i].delay_ms) << "piece " << piece << " word " << i;
      }
      EXPECT_EQ((*t)->samples_pushed(), n);
    }
  }
}

// The independent path: whole-utterance features and encoder, a Session stepped by hand as SimulEval's
// evaluator would drive an agent reading one chunk-long segment per request.
struct HandRun {
  std::vector<std::string> words;
  std::vector<double> delays;
};

HandRun hand_run(SpeechModel& m, const stream::SessionOptions& so, const std::vector<float>& audio) {
  HandRun r;
  const std::vector<float> mel = audio::log_mel(audio);
  const int64_t n_frames = static_cast<int64_t>(mel.size() / audio::kLogMelBins);
  speech_encoder::SpeechEncoderPass pass(*m.encoder, 1);
  const std::vector<float> rows = pass.forward(mel.data(), n_frames);
  const int64_t width = m.encoder->config().llm_hidden;
  const int64_t n_rows = pass.rows();
  EXPECT_EQ(static_cast<int64_t>(rows.size()), n_rows * width);
  const int64_t rpc = m.encoder->config().rows_per_chunk();
  const int64_t full_chunks = n_rows / rpc;
  auto clock = eval::SpeechSourceClock::create(16000, static_cast<int64_t>(audio.size()), m.chunk_ms());
  EXPECT_TRUE(clock.ok());
  auto session = stream::Session::create(*m.llm.model, *m.llm.codec, so);
  EXPECT_TRUE(session.ok());
  stream::Session& s = **session;
  int64_t next = 0;
  bool ended = false;
  for (int guard = 0; guard < 10000; ++guard) {
    auto e = s.step();
    EXPECT_TRUE(e.ok());
    if (!e.ok() || e->kind == stream::EventKind::Finished) break;
    if (e->kind == stream::EventKind::Word) {
      r.words.push_back(e->word);
      r.delays.push_back(clock->delay_ms());
    } else if (e->kind == stream::EventKind::NeedSource) {
      EXPECT_FALSE(ended);
      if (next < full_chunks) {
        const float* p = rows.data() + next * rpc * width;
        EXPECT_TRUE(s.push_source_embeddings(std::span<const float>(p, static_cast<size_t>(rpc * width)),
                                             static_cast<int>(width), m.chunk_ms())
                        .ok());
        ++next;
        clock->advance();
      } else {  // the audio ends: the tail rows (if any), the rest of the audio, the end of the source
        const int64_t tail = n_rows - next * rpc;
        if (tail > 0) {
          const float* p = rows.data() + next * rpc * width;
          EXPECT_TRUE(s.push_source_embeddings(std::span<const float>(p, static_cast<size_t>(tail * width)),
                                               static_cast<int>(width))
                          .ok());
        }
        while (!clock->finished()) clock->advance();
        EXPECT_TRUE(s.end_source().ok());
        ended = true;
      }
    }
  }
  return r;
}

TEST_F(Transcriber, EqualsASessionFedWithWholeUtteranceRows) {
  for (int variant = 0; variant < 2; ++variant) {
    stream::SessionOptions so = options();
    if (variant == 1) so.k = 3;
    auto t = SpeechTranscriber::create(*model_, so);
    ASSERT_TRUE(t.ok()) << t.error().message();
    for (size_t n : kLengths) {
      const auto audio = test_audio(n, n + 7);
      const auto got = transcribe(**t, audio, 160);
      const HandRun want = hand_run(*model_, so, audio);
      ASSERT_EQ(got.size(), want.words.size()) << "k " << so.k << ", " << n << " samples";
      ASSERT_FALSE(got.empty());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].text, want.words[i]) << "word " << i;
        EXPECT_DOUBLE_EQ(got[i].delay_ms, want.delays[i]) << "word " << i;
      }
    }
  }
}

TEST_F(Transcriber, DelaysAreChunkMultiplesCappedAtTheAudio) {
  auto t = SpeechTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok()) << t.error().message();
  for (size_t n : kLengths) {
    const auto audio = test_audio(n, 3 * n);
    const auto words = transcribe(**t, audio, 1001);
    const double total = static_cast<double>(n) / 16.0;
    ASSERT_FALSE(words.empty());
    for (size_t i = 0; i < words.size(); ++i) {
      const auto& w = words[i];
      EXPECT_GE(w.chunks, 1) << i;
      if (w.delay_ms != total) {
        EXPECT_EQ(w.delay_ms, 160.0 * w.chunks) << i;
      }
      EXPECT_LE(w.delay_ms, total) << i;
      EXPECT_LE(160.0 * (w.chunks - 1), w.delay_ms) << i;
      EXPECT_GE(w.elapsed_ms, w.delay_ms) << i;
      if (i) {
        EXPECT_GE(w.delay_ms, words[i - 1].delay_ms) << i;
        EXPECT_GE(w.elapsed_ms, words[i - 1].elapsed_ms) << i;
      }
    }
    EXPECT_DOUBLE_EQ((*t)->audio_ms(), total);
    EXPECT_GT((*t)->compute_ms(), 0.0);
  }
}

TEST_F(Transcriber, OfflineWritesEverythingAtTheEndOfTheAudio) {
  stream::SessionOptions so = options();
  so.paradigm = stream::Paradigm::Offline;
  auto t = SpeechTranscriber::create(*model_, so);
  ASSERT_TRUE(t.ok()) << t.error().message();
  const auto words = transcribe(**t, test_audio(18000, 5), 160);
  ASSERT_FALSE(words.empty());
  for (const auto& w : words) EXPECT_EQ(w.delay_ms, 1125.0);
}

// With a frozen clock no computation time passes: elapsed equals the delay exactly.
TEST_F(Transcriber, ElapsedIsDelayPlusComputation) {
  stream::SessionOptions so = options();
  so.clock = [] { return 1234.5; };
  auto t = SpeechTranscriber::create(*model_, so);
  ASSERT_TRUE(t.ok()) << t.error().message();
  const auto words = transcribe(**t, test_audio(18000, 11), 500);
  ASSERT_FALSE(words.empty());
  for (const auto& w : words) EXPECT_EQ(w.elapsed_ms, w.delay_ms);
  EXPECT_EQ((*t)->compute_ms(), 0.0);
  // A clock advancing 1 ms per reading: elapsed − delay grows and stays within the total computation time.
  double now = 0;
  so.clock = [&now] { return now += 1.0; };
  auto t2 = SpeechTranscriber::create(*model_, so);
  ASSERT_TRUE(t2.ok());
  const auto w2 = transcribe(**t2, test_audio(18000, 11), 500);
  ASSERT_EQ(w2.size(), words.size());
  double last = 0;
  for (const auto& w : w2) {
    EXPECT_GT(w.elapsed_ms - w.delay_ms, last);
    last = w.elapsed_ms - w.delay_ms;
  }
  EXPECT_LE(last, (*t2)->compute_ms());
}

TEST_F(Transcriber, ShortAudioAndMisuse) {
  auto t = SpeechTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok()) << t.error().message();
  // 100 samples: no log-mel frame, no chunk; the model still gets the end of the source.
  const auto audio = test_audio(100, 1);
  const auto words = transcribe(**t, audio, 0);
  for (const auto& w : words) {
    EXPECT_EQ(w.chunks, 0);
    EXPECT_EQ(w.delay_ms, 6.25);
  }
  EXPECT_TRUE((*t)->finished());
  std::vector<TranscribedWord> out;
  EXPECT_FALSE((*t)->push(audio.data(), audio.size(), out).ok());
  EXPECT_FALSE((*t)->finish(out).ok());
  ASSERT_TRUE((*t)->reset().ok());
  EXPECT_EQ((*t)->samples_pushed(), 0u);
  EXPECT_TRUE((*t)->words().empty());
  EXPECT_TRUE((*t)->push(audio.data(), audio.size(), out).ok());

  stream::SessionOptions so = options();
  so.continuous = true;
  EXPECT_FALSE(SpeechTranscriber::create(*model_, so).ok());
}

TEST_F(Transcriber, TranscriptJoinsTheWords) {
  auto t = SpeechTranscriber::create(*model_, options());
  ASSERT_TRUE(t.ok());
  const auto words = transcribe(**t, test_audio(20800, 2), 0);
  std::string want;
  for (const auto& w : words) want += (want.empty() ? "" : " ") + w.text;
  EXPECT_EQ((*t)->transcript(), want);
}

}  // namespace
}  // namespace gpstream::speech
