// Loading manifest utterances (the committed espeak-ng fixture, tests/audio/data/speech/): 16 kHz output of
// the length the resampler definition gives, noise at the drawn SNR (measured against the clean load), the
// same noise for the same (seed, epoch, wav) whatever the manifest's order, other noise in another epoch, and
// clear errors for a length that disagrees with the manifest, a missing WAV and invalid noise options.
#include "speech/speech_loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "../testing/fp_bounds.h"
#include "../testing/temp_dir.h"

namespace gpstream::speech {
namespace {

const std::string kFixture = std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/speech/";

SpeechManifest fixture_train() {
  auto m = read_speech_manifest(kFixture + "train/manifest.tsv");
  EXPECT_TRUE(m.ok()) << m.error().message();
  return m.ok() ? std::move(m).value() : SpeechManifest{};
}

SpeechLoadOptions clean_options() {
  SpeechLoadOptions o;
  o.add_noise = false;
  return o;
}

double snr_db(const std::vector<float>& clean, const std::vector<float>& noisy) {
  double ps = 0, pn = 0;
  for (size_t i = 0; i < clean.size(); ++i) {
    const double d = static_cast<double>(noisy[i]) - clean[i];
    ps += static_cast<double>(clean[i]) * clean[i];
    pn += d * d;
  }
  return 10 * std::log10(ps / pn);
}

TEST(SpeechLoader, CleanLoadIs16kHzOfTheExpectedLength) {
  const auto m = fixture_train();
  ASSERT_EQ(m.utterances.size(), 2u);
  for (const auto& u : m.utterances) {
    auto r = load_speech_utterance(u, 0, clean_options());
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->source_rate, 22050u);
    EXPECT_TRUE(r->noise.clean);
    // espeak-ng's 44-byte header, 16-bit mono: n = (size - 44) / 2 samples; the resampler gives ceil(n L / M)
    // with L/M = 16000/22050 = 320/441.
    const uint64_t n = (std::filesystem::file_size(u.wav_path) - 44) / 2;
    EXPECT_EQ(r->samples.size(), (n * 320 + 440) / 441) << u.wav;
    EXPECT_EQ(n * 1000 / 22050, u.duration_ms);
    double peak = 0;
    for (float s : r->samples) peak = std::max(peak, static_cast<double>(std::abs(s)));
    EXPECT_GT(peak, 0.05) << "speech expected in " << u.wav;
  }
}

TEST(SpeechLoader, NoiseIsAtTheDrawnSnrAndDeterministic) {
  const auto m = fixture_train();
  ASSERT_FALSE(m.utterances.empty());
  const auto& u = m.utterances[0];
  auto clean = load_speech_utterance(u, 0, clean_options());
  ASSERT_TRUE(clean.ok());
  SpeechLoadOptions o;
  o.noise.snr_min_db = 5;
  o.noise.snr_max_db = 25;
  auto a = load_speech_utterance(u, 3, o);
  auto b = load_speech_utterance(u, 3, o);
  auto next_epoch = load_speech_utterance(u, 4, o);
  ASSERT_TRUE(a.ok() && b.ok() && next_epoch.ok());
  EXPECT_FALSE(a->noise.clean);
  EXPECT_GE(a->noise.snr_db, 5.0);
  EXPECT_LE(a->noise.snr_db, 25.0);
  // The mix is scaled to the drawn SNR in double; only its fp32 rounding moves the measured one.
  EXPECT_NEAR(snr_db(clean->samples, a->samples), a->noise.snr_db,
              gpstream::testing::fp32_mix_snr_bound_db(a->noise.snr_db));
  EXPECT_EQ(a->samples, b->samples);
  EXPECT_NE(a->samples, next_epoch->samples);
  o.seed = 2;
  auto other_seed = load_speech_utterance(u, 3, o);
  ASSERT_TRUE(other_seed.ok());
  EXPECT_NE(a->samples, other_seed->samples);
  // Another utterance in the same epoch gets other noise (not just the same noise rescaled).
  auto other = load_speech_utterance(m.utterances[1], 3, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->noise.snr_db, other_seed->noise.snr_db);
}

TEST(SpeechLoader, NoiseFollowsTheWavNotTheManifestOrder) {
  const auto m = fixture_train();
  ASSERT_EQ(m.utterances.size(), 2u);
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("wav"));
  for (const auto& u : m.utterances) std::filesystem::copy_file(u.wav_path, dir.file(u.wav));
  // The same two lines in the opposite order, in another folder.
  std::string text(kSpeechManifestHeader);
  text += "\n";
  for (int i = 1; i >= 0; --i) {
    const auto& u = m.utterances[static_cast<size_t>(i)];
    text += u.wav + "\t" + u.transcript + "\t" + u.voice + "\t" + std::to_string(u.speed) + "\t" +
            std::to_string(u.pitch) + "\t" + std::to_string(u.duration_ms) + "\n";
  }
  testing::write_bytes(dir.file("manifest.tsv"), text);
  auto swapped = read_speech_manifest(dir.file("manifest.tsv"));
  ASSERT_TRUE(swapped.ok()) << swapped.error().message();
  SpeechLoadOptions o;
  auto original = load_speech_utterance(m.utterances[0], 1, o);
  auto moved = load_speech_utterance(swapped->utterances[1], 1, o);
  ASSERT_TRUE(original.ok() && moved.ok());
  EXPECT_EQ(original->samples, moved->samples);
}

TEST(SpeechLoader, LengthDisagreeingWithTheManifestIsAnError) {
  auto m = fixture_train();
  ASSERT_FALSE(m.utterances.empty());
  SpeechUtterance u = m.utterances[0];
  u.duration_ms += 1;  // within the default tolerance
  EXPECT_TRUE(load_speech_utterance(u, 0, clean_options()).ok());
  u.duration_ms += 5;
  auto r = load_speech_utterance(u, 0, clean_options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Format);
  EXPECT_NE(r.error().message().find(u.wav_path), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("line 2 of the manifest says " + std::to_string(u.duration_ms)),
            std::string::npos)
      << r.error().message();
}

TEST(SpeechLoader, APlainManifestHasNoLengthToCheck) {
  // The same WAV listed in a plain manifest (audio<TAB>transcript): no duration to compare, the same samples.
  auto m = fixture_train();
  ASSERT_FALSE(m.utterances.empty());
  const std::string text = m.utterances[0].wav + "\t" + m.utterances[0].transcript + "\n";
  auto plain = parse_speech_manifest({reinterpret_cast<const std::byte*>(text.data()), text.size()},
                                     "plain.tsv", kFixture + "train");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  ASSERT_FALSE(plain->utterances[0].has_metadata);
  auto a = load_speech_utterance(plain->utterances[0], 0, clean_options());
  ASSERT_TRUE(a.ok()) << a.error().message();
  auto b = load_speech_utterance(m.utterances[0], 0, clean_options());
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(a->samples, b->samples);
}

TEST(SpeechLoader, MissingWavAndBadOptionsAreErrors) {
  auto m = fixture_train();
  ASSERT_FALSE(m.utterances.empty());
  SpeechUtterance u = m.utterances[0];
  u.wav_path += ".missing";
  auto r = load_speech_utterance(u, 0, clean_options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Io);
  EXPECT_NE(r.error().message().find(u.wav_path), std::string::npos);

  SpeechLoadOptions bad;
  bad.noise.snr_min_db = 40;  // above the maximum of 30
  auto b = load_speech_utterance(m.utterances[0], 0, bad);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code(), ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace gpstream::speech
