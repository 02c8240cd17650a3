// Audio files through read_audio_file: WAV by our reader; FLAC, Ogg Vorbis and MP3 written by sox from a WAV
// this test writes byte by byte, decoded by libsndfile and compared with an independent reference:
//   FLAC (lossless): exactly the WAV's samples (mono, and the mean of a stereo pair);
//   Ogg Vorbis: sox's own decode of the same file (libvorbisfile's 16-bit ov_read, written as float WAV),
//   within
//     half a 16-bit step (ov_read rounds to the nearest step: |error| <= 0.5 / 32768);
//   MP3: the WAV source delayed by 1105 samples (LAME's 576-sample encoder delay + the 529-sample decoder
//   delay
//     of the MPEG-1 layer III synthesis; libsndfile does not trim them), at a signal-to-error ratio of at
//     least 20 dB (measured 26 dB at sox's default 128 kbit/s; a wrong scale, channel or alignment gives
//     under 7 dB).
// Also: rates outside 8-192 kHz refused for any format, not-audio and missing files, a truncated FLAC.
// The sox-made cases are skipped, saying so, when sox is not installed (scripts/setup installs it).
#include "audio/audio_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "../testing/temp_dir.h"
#include "../testing/wav_writer.h"

namespace gpstream::audio {
namespace {

bool have_sox() {
  return std::system("command -v sox > /dev/null 2>&1") == 0;
}

// Runs sox with `args` in `dir`; true on success.
bool sox(const testing::TempDir& dir, const std::string& args) {
  return std::system(("cd " + dir.path() + " && sox -V1 " + args + " 2> sox.err").c_str()) == 0;
}

// 1 s of two tones (300 Hz and 1200 Hz, 0.25 each) and a little seeded noise at 44.1 kHz.
std::vector<float> test_signal(double phase) {
  std::vector<float> s(44100);
  uint64_t x = 12345;
  for (size_t i = 0; i < s.size(); ++i) {
    const double t = static_cast<double>(i) / 44100.0;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const double noise = static_cast<double>(x >> 11) / 9007199254740992.0 - 0.5;
    s[i] = static_cast<float>(0.25 * std::sin(2 * M_PI * 300 * t + phase) +
                              0.25 * std::sin(2 * M_PI * 1200 * t) + 0.01 * noise);
  }
  return s;
}

WavAudio read_ok(const std::string& path) {
  auto r = read_audio_file(path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r).value() : WavAudio{};
}

class AudioFile : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_wav16(dir.file("a.wav"), test_signal(0.0), 44100);
    testing::write_wav16(dir.file("b.wav"), test_signal(1.0), 44100);
    source = read_ok(dir.file("a.wav")).samples;
    ASSERT_EQ(source.size(), 44100u);
  }
  void need_sox() {
    if (!have_sox()) GTEST_SKIP() << "sox not installed: FLAC/Ogg/MP3 fixtures cannot be made";
  }
  testing::TempDir dir;
  std::vector<float> source;
};

TEST_F(AudioFile, WavGoesThroughOurReader) {
  const WavAudio w = read_ok(dir.file("a.wav"));
  EXPECT_EQ(w.sample_rate, 44100u);
  EXPECT_EQ(w.bits_per_sample, 16);
  auto ours = read_wav_file(dir.file("a.wav"));
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(w.samples, ours->samples);
}

TEST_F(AudioFile, FlacIsExact) {
  need_sox();
  ASSERT_TRUE(sox(dir, "a.wav a.flac"));
  const WavAudio f = read_ok(dir.file("a.flac"));
  EXPECT_EQ(f.sample_rate, 44100u);
  EXPECT_EQ(f.channels, 1);
  EXPECT_EQ(f.bits_per_sample, 16);
  EXPECT_EQ(f.format, WavSampleFormat::Int);
  ASSERT_EQ(f.samples.size(), source.size());
  for (size_t i = 0; i < source.size(); ++i) ASSERT_EQ(f.samples[i], source[i]) << "sample " << i;
  // A stereo FLAC (a left, b right): the mean of the two WAVs' samples, computed in double.
  ASSERT_TRUE(sox(dir, "-M a.wav b.wav ab.flac"));
  const WavAudio st = read_ok(dir.file("ab.flac"));
  EXPECT_EQ(st.channels, 2);
  const auto b = read_ok(dir.file("b.wav")).samples;
  ASSERT_EQ(st.samples.size(), source.size());
  for (size_t i = 0; i < source.size(); ++i)
    ASSERT_EQ(st.samples[i], static_cast<float>((static_cast<double>(source[i]) + b[i]) / 2))
        << "sample " << i;
}

TEST_F(AudioFile, OggVorbisMatchesAnIndependentDecode) {
  need_sox();
  ASSERT_TRUE(sox(dir, "a.wav a.ogg"));
  ASSERT_TRUE(sox(dir, "a.ogg -e floating-point -b 32 a_ogg_by_sox.wav"));
  const WavAudio o = read_ok(dir.file("a.ogg"));
  const auto ref = read_ok(dir.file("a_ogg_by_sox.wav")).samples;
  EXPECT_EQ(o.sample_rate, 44100u);
  EXPECT_EQ(o.bits_per_sample, 0);  // no sample width in Vorbis
  EXPECT_EQ(o.format, WavSampleFormat::Float);
  ASSERT_EQ(o.samples.size(), ref.size());
  EXPECT_EQ(o.samples.size(), source.size());
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(o.samples[i]) - ref[i]));
  // Both decode with libvorbis: libsndfile hands its float samples through, while SoX reads through ov_read
  // as 16-bit PCM (round to nearest of x·32768, exact scalings either side) before writing them as floats:
  // at most half a 16-bit step apart, exactly.
  EXPECT_LE(worst, 0.5 / 32768);
}

TEST_F(AudioFile, Mp3IsTheSourceDelayedByTheCodecDelay) {
  need_sox();
  ASSERT_TRUE(sox(dir, "a.wav a.mp3"));
  const WavAudio m = read_ok(dir.file("a.mp3"));
  EXPECT_EQ(m.sample_rate, 44100u);
  EXPECT_EQ(m.channels, 1);
  constexpr size_t kDelay = 576 + 529;
  ASSERT_GE(m.samples.size(), source.size() + kDelay);
  // The best alignment within 4000 samples is the codec delay, and the error there is small.
  auto error_at = [&](size_t lag) {
    double e = 0;
    for (size_t i = 0; i < source.size(); ++i) {
      const double d = static_cast<double>(m.samples[i + lag]) - source[i];
      e += d * d;
    }
    return e;
  };
  size_t best = 0;
  double best_error = error_at(0);
  for (size_t lag = 1; lag < 4000 && lag + source.size() <= m.samples.size(); ++lag) {
    const double e = error_at(lag);
    if (e < best_error) best_error = e, best = lag;
  }
  EXPECT_EQ(best, kDelay);
  double power = 0;
  for (float s : source) power += static_cast<double>(s) * s;
  EXPECT_GE(10 * std::log10(power / error_at(kDelay)), 20.0);
}

TEST_F(AudioFile, RatesOutsideTheSpeechRangeAreRefusedInAnyFormat) {
  need_sox();
  ASSERT_TRUE(sox(dir, "a.wav -r 4000 low.flac"));
  auto r = read_audio_file(dir.file("low.flac"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("low.flac: sample rate 4000 Hz is below the minimum of 8000 Hz"),
            std::string::npos)
      << r.error().message();
}

TEST_F(AudioFile, TruncatedFlacGivesAPrefixOrAnError) {
  // libsndfile decodes the frames that are whole; what it returns must be the start of the audio.
  need_sox();
  ASSERT_TRUE(sox(dir, "a.wav a.flac"));
  const auto size = std::filesystem::file_size(dir.file("a.flac"));
  std::filesystem::resize_file(dir.file("a.flac"), size / 2);
  auto r = read_audio_file(dir.file("a.flac"));
  if (!r.ok()) {
    EXPECT_NE(r.error().message().find("a.flac"), std::string::npos) << r.error().message();
    return;
  }
  ASSERT_LT(r->samples.size(), source.size());
  for (size_t i = 0; i < r->samples.size(); ++i) ASSERT_EQ(r->samples[i], source[i]) << "sample " << i;
}

TEST_F(AudioFile, NotAudioAndMissingFiles) {
  testing::write_bytes(dir.file("text.flac"), "hello, I am text\n");
  auto text = read_audio_file(dir.file("text.flac"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::Format);
  EXPECT_NE(text.error().message().find("text.flac: not an audio file"), std::string::npos)
      << text.error().message();
  auto missing = read_audio_file(dir.file("nowhere.ogg"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::Io);
  EXPECT_NE(missing.error().message().find("nowhere.ogg"), std::string::npos);
  // A RIFF/WAVE file with a defect gets our reader's message, not libsndfile's.
  testing::write_bytes(dir.file("bad.wav"), "RIFF" + std::string("\x04\x00\x00\x00", 4) + "WAVE");
  auto bad = read_audio_file(dir.file("bad.wav"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("no fmt chunk"), std::string::npos) << bad.error().message();
}

}  // namespace
}  // namespace gpstream::audio
