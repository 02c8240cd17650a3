// evaluate_speech over a small manifest: each record holds what a separately driven SpeechTranscriber writes
// for the loader's audio (noised when asked; clean by default), with SimulEval's speech fields (source list,
// source_length in ms, float delays), and passes the speech log validation that `gpstream score --speech`
// applies.
#include "speech/speech_evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "../testing/temp_dir.h"
#include "../testing/tiny_speech_model.h"
#include "../testing/wav_writer.h"
#include "eval/speech_scores.h"
#include "speech/speech_manifest.h"

namespace gpstream::speech {
namespace {

std::vector<float> tone(size_t n, double f) {
  std::vector<float> s(n);
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<float>(0.4 * std::sin(2 * M_PI * f * static_cast<double>(i) / 16000.0) *
                              (0.6 + 0.4 * std::sin(static_cast<double>(i) / 900.0)));
  return s;
}

TEST(SpeechEvaluation, RecordsAreTheTranscribersOutput) {
  gpstream::testing::TempDir dir;
  ASSERT_TRUE(gpstream::testing::write_tiny_speech_model(dir.file("model")).ok());
  std::filesystem::create_directories(dir.file("data/wav"));
  std::string manifest = "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms\n";
  const size_t lengths[] = {17000, 9000};
  for (int i = 0; i < 2; ++i) {
    const std::string wav = "wav/u" + std::to_string(i) + ".wav";
    gpstream::testing::write_wav16(dir.file("data/" + wav), tone(lengths[i], 300.0 + 250.0 * i), 16000);
    manifest += wav + "\tHello there number " + std::to_string(i) + ".\ten-gb+f1\t150\t40\t" +
                std::to_string(lengths[i] / 16) + "\n";
  }
  std::ofstream(dir.file("data/manifest.tsv")) << manifest;
  auto man = speech::read_speech_manifest(dir.file("data/manifest.tsv"));
  ASSERT_TRUE(man.ok()) << man.error().message();
  auto model = SpeechModel::load(dir.file("model"), 1);
  ASSERT_TRUE(model.ok()) << model.error().message();
  stream::SessionOptions so = model->llm.default_options();
  so.max_target_tokens = 30;
  EXPECT_FALSE(SpeechEvalOptions{}.load.add_noise);  // the audio as given by default
  SpeechEvalOptions eo;
  eo.load.add_noise = true;  // noise on, epoch 0
  size_t calls = 0;
  auto res = evaluate_speech(*model, so, man->utterances, eo, [&](size_t done, size_t total) {
    EXPECT_EQ(done, ++calls);
    EXPECT_EQ(total, 2u);
  });
  ASSERT_TRUE(res.ok()) << res.error().message();
  ASSERT_EQ(res->records.size(), 2u);
  EXPECT_DOUBLE_EQ(res->audio_seconds, (17000.0 + 9000.0) / 16000.0);
  EXPECT_GT(res->compute_seconds, 0.0);
  EXPECT_DOUBLE_EQ(res->real_time_factor(), res->compute_seconds / res->audio_seconds);

  auto t = SpeechTranscriber::create(*model, so);
  ASSERT_TRUE(t.ok());
  size_t total_words = 0;
  for (size_t i = 0; i < 2; ++i) {
    const auto& u = man->utterances[i];
    const auto& r = res->records[i];
    auto loaded = speech::load_speech_utterance(u, 0, eo.load);
    ASSERT_TRUE(loaded.ok());
    ASSERT_FALSE(loaded->noise.clean);  // the evaluation heard noisy audio
    ASSERT_TRUE((*t)->reset().ok());
    std::vector<TranscribedWord> words;
    ASSERT_TRUE((*t)->push(loaded->samples.data(), loaded->samples.size(), words).ok());
    ASSERT_TRUE((*t)->finish(words).ok());
    EXPECT_EQ(r.index, static_cast<int64_t>(i));
    EXPECT_EQ(r.prediction, (*t)->transcript());
    ASSERT_EQ(r.delays.size(), words.size());
    for (size_t w = 0; w < words.size(); ++w) EXPECT_EQ(r.delays[w], words[w].delay_ms);
    EXPECT_EQ(r.elapsed.size(), words.size());
    EXPECT_EQ(r.prediction_length, static_cast<int64_t>(words.size()));
    EXPECT_EQ(r.reference, u.transcript);
    EXPECT_EQ(r.source, u.wav);
    EXPECT_TRUE(r.source_is_list);
    EXPECT_EQ(r.source_length, static_cast<double>(lengths[i]) / 16.0);
    EXPECT_FALSE(r.delays_int);
    EXPECT_TRUE(eval::validate_speech_instance(r, eval::LatencyUnit::Word, true).ok());
    // The written line reads back to the same record.
    auto back = eval::parse_instance_line(r.to_json_line(), "test");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->delays, r.delays);
    EXPECT_EQ(back->source_length, r.source_length);
    total_words += words.size();
  }
  EXPECT_GT(total_words, 0u);
  // A WAV whose length disagrees with the manifest is an error naming it.
  auto bad = man->utterances;
  bad[1].duration_ms += 50;
  auto err = evaluate_speech(*model, so, bad, eo);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message().find("u1.wav"), std::string::npos) << err.error().message();
}

}  // namespace
}  // namespace gpstream::speech
