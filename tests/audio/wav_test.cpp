// WAV reader: files built byte by byte for each sample format (expected values computed by hand from the
// bytes), a 24-bit stereo fixture written by Python's `wave` module with numpy's channel mean as the oracle
// (scripts/make-audio-fixtures), and hostile files, one defect each, expecting a clear error.
#include "audio/wav.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "../testing/temp_dir.h"
#include "../testing/wav_writer.h"
#include "audio_test_util.h"

namespace gpstream::audio {
namespace {

using namespace testing::wav_bytes;
using testing::read_f32;

const std::string kGoodFmtForPlaceholders = fmt_chunk(1, 1, 16000, 16);

WavAudio parse_ok(const std::string& file) {
  auto r = read_wav(as_bytes(file), "test.wav");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r).value() : WavAudio{};
}

// The file must be rejected with an error naming the file and containing `what`.
void expect_error(const std::string& file, const std::string& what, ErrorCode code = ErrorCode::Format) {
  auto r = read_wav(as_bytes(file), "bad.wav");
  ASSERT_FALSE(r.ok()) << "accepted a file that should fail with '" << what << "'";
  EXPECT_EQ(r.error().code(), code) << r.error().message();
  EXPECT_NE(r.error().message().find("bad.wav"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find(what), std::string::npos)
      << "message lacks '" << what << "': " << r.error().message();
}

TEST(WavRead, Pcm16Mono) {
  const auto w = parse_ok(
      riff(fmt_chunk(1, 1, 16000, 16) + chunk("data", le16(0) + le16(16384) + le16(0x8000) + le16(32767))));
  EXPECT_EQ(w.sample_rate, 16000u);
  EXPECT_EQ(w.channels, 1);
  EXPECT_EQ(w.bits_per_sample, 16);
  EXPECT_EQ(w.format, WavSampleFormat::Int);
  EXPECT_EQ(w.samples, (std::vector<float>{0.0f, 0.5f, -1.0f, 32767.0f / 32768.0f}));
}

TEST(WavRead, Pcm8IsUnsigned) {
  const auto w = parse_ok(riff(fmt_chunk(1, 1, 8000, 8) + chunk("data", std::string("\x80\x00\xff\xc0", 4))));
  EXPECT_EQ(w.samples, (std::vector<float>{0.0f, -1.0f, 127.0f / 128.0f, 0.5f}));
}

TEST(WavRead, Pcm24SignExtends) {
  // 0x400000 = 2^22 -> 0.5; 0x800000 -> -1; 0xFFFFFF -> -1/2^23.
  const std::string data(
      "\x00\x00\x40"
      "\x00\x00\x80"
      "\xff\xff\xff",
      9);
  const auto w = parse_ok(riff(fmt_chunk(1, 1, 22050, 24) + chunk("data", data)));
  EXPECT_EQ(w.samples, (std::vector<float>{0.5f, -1.0f, static_cast<float>(-1.0 / 8388608.0)}));
}

TEST(WavRead, Pcm32) {
  const auto w =
      parse_ok(riff(fmt_chunk(1, 1, 48000, 32) + chunk("data", le32(0x40000000u) + le32(0x80000000u))));
  EXPECT_EQ(w.samples, (std::vector<float>{0.5f, -1.0f}));
}

TEST(WavRead, Float32AndFloat64) {
  float f[2] = {0.25f, -1.5f};  // float files may exceed [-1, 1]: taken as they are
  std::string data(reinterpret_cast<const char*>(f), 8);
  auto w = parse_ok(riff(fmt_chunk(3, 1, 16000, 32) + chunk("data", data)));
  EXPECT_EQ(w.format, WavSampleFormat::Float);
  EXPECT_EQ(w.samples, (std::vector<float>{0.25f, -1.5f}));
  double d[1] = {0.125};
  w = parse_ok(
      riff(fmt_chunk(3, 1, 16000, 64) + chunk("data", std::string(reinterpret_cast<const char*>(d), 8))));
  EXPECT_EQ(w.samples, (std::vector<float>{0.125f}));
}

TEST(WavRead, StereoIsAveraged) {
  // Frames (L, R): (16384, 0) -> 0.25; (-32768, 16384) -> -0.25.
  const auto w = parse_ok(
      riff(fmt_chunk(1, 2, 16000, 16) + chunk("data", le16(16384) + le16(0) + le16(0x8000) + le16(16384))));
  EXPECT_EQ(w.channels, 2);
  EXPECT_EQ(w.samples, (std::vector<float>{0.25f, -0.25f}));
}

std::string extensible_fmt(uint16_t subformat, uint16_t channels, uint16_t bits, uint16_t valid_bits) {
  const std::string guid_tail("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 14);
  return chunk("fmt ", fmt_payload(0xFFFE, channels, 16000, bits) + le16(22) + le16(valid_bits) + le32(0x3) +
                           le16(subformat) + guid_tail);
}

TEST(WavRead, ExtensiblePcmAndFloat) {
  // 20 valid bits in a 24-bit container, left-justified: scaled by the container width.
  auto w = parse_ok(
      riff(extensible_fmt(1, 2, 24, 20) + chunk("data", std::string("\x00\x00\x40\x00\x00\x20", 6))));
  EXPECT_EQ(w.samples, (std::vector<float>{0.375f}));
  const float f = 0.75f;
  w = parse_ok(
      riff(extensible_fmt(3, 1, 32, 32) + chunk("data", std::string(reinterpret_cast<const char*>(&f), 4))));
  EXPECT_EQ(w.format, WavSampleFormat::Float);
  EXPECT_EQ(w.samples, (std::vector<float>{0.75f}));
}

TEST(WavRead, SkipsOtherChunksWithOddPadding) {
  // An odd-sized LIST chunk (pad byte follows), data before fmt, and trailing junk after the RIFF form.
  const std::string body = chunk("LIST", "abc") + chunk("data", le16(16384)) + fmt_chunk(1, 1, 16000, 16);
  const auto w = parse_ok(riff(body) + "JUNKJUNK");
  EXPECT_EQ(w.samples, (std::vector<float>{0.5f}));
}

TEST(WavRead, OddDataChunkAtEndWithoutPadByte) {
  std::string file = riff(fmt_chunk(1, 1, 8000, 8) + chunk("data", std::string("\xc0", 1)));
  file.pop_back();  // drop the pad byte, then fix the RIFF size to match
  const std::string fixed = "RIFF" + le32(static_cast<uint32_t>(file.size() - 8)) + file.substr(8);
  EXPECT_EQ(parse_ok(fixed).samples, (std::vector<float>{0.5f}));
}

TEST(WavRead, RateBoundsAreInclusive) {
  EXPECT_EQ(parse_ok(riff(fmt_chunk(1, 1, 8000, 16) + chunk("data", le16(1)))).sample_rate, 8000u);
  EXPECT_EQ(parse_ok(riff(fmt_chunk(1, 1, 192000, 16) + chunk("data", le16(1)))).sample_rate, 192000u);
}

TEST(WavRead, StreamingPlaceholderSizesReadToTheEnd) {
  // A recorder writing to a pipe leaves the RIFF and data sizes at 0xFFFFFFFF (or both 0): the data runs to
  // the end of the file. 16384 → 0.5, 0x8000 → -1.
  const std::string data = le16(16384) + le16(0x8000);
  for (const auto& [riff_size, data_size] :
       {std::pair{0xFFFFFFFFu, 0xFFFFFFFFu}, std::pair{0u, 0u}, std::pair{0u, 0xFFFFFFFFu}}) {
    const std::string file =
        "RIFF" + le32(riff_size) + "WAVE" + kGoodFmtForPlaceholders + "data" + le32(data_size) + data;
    EXPECT_EQ(parse_ok(file).samples, (std::vector<float>{0.5f, -1.0f})) << riff_size << " " << data_size;
  }
  // A true RIFF size and a data size of 0xFFFFFFFF: the data runs to the end of the form.
  const std::string body = kGoodFmtForPlaceholders + "data" + le32(0xFFFFFFFF) + data;
  EXPECT_EQ(parse_ok(riff(body)).samples, (std::vector<float>{0.5f, -1.0f}));
}

TEST(WavRead, EmptyDataChunk) {
  EXPECT_TRUE(parse_ok(riff(fmt_chunk(1, 1, 16000, 16) + chunk("data", ""))).samples.empty());
}

TEST(WavRead, StereoFixtureFromPythonWave) {
  auto r = read_wav_file(std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/stereo_24bit_44k.wav");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto expected =
      read_f32(std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/stereo_24bit_44k.mono.f32");
  ASSERT_EQ(expected.size(), 2205u);
  EXPECT_EQ(r->sample_rate, 44100u);
  EXPECT_EQ(r->channels, 2);
  EXPECT_EQ(r->bits_per_sample, 24);
  ASSERT_EQ(r->samples.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) ASSERT_FLOAT_EQ(r->samples[i], expected[i]) << "sample " << i;
}

TEST(WavRead, MissingFileIsIoError) {
  auto r = read_wav_file("/nonexistent/x.wav");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Io);
}

const std::string kGoodFmt = fmt_chunk(1, 1, 16000, 16);
const std::string kGoodData = chunk("data", le16(1) + le16(2));

TEST(WavHostile, Empty) {
  expect_error("", "too short");
}
TEST(WavHostile, NotRiff) {
  expect_error("RIFX" + le32(4) + "WAVE", "RIFX", ErrorCode::Unsupported);
}
TEST(WavHostile, NotRiffMagic) {
  expect_error("ABCD" + le32(4) + "WAVE", "not a RIFF file");
}
TEST(WavHostile, NotWave) {
  expect_error("RIFF" + le32(4) + "AVI ", "not WAVE");
}
TEST(WavHostile, Rf64) {
  expect_error("RF64" + le32(0xFFFFFFFF) + "WAVE", "RF64", ErrorCode::Unsupported);
}
TEST(WavHostile, TruncatedFile) {
  const std::string file = riff(kGoodFmt + kGoodData);
  expect_error(file.substr(0, file.size() - 3), "runs past the end");
}
TEST(WavHostile, HugeRiffSize) {
  expect_error("RIFF" + le32(0xFFFFFFF0) + "WAVE" + kGoodFmt + kGoodData, "runs past the end");
}
TEST(WavHostile, ChunkSizePastEnd) {
  expect_error(riff(kGoodFmt + chunk("data", le16(1), 0x7FFFFFF0)),
               "chunk 'data' at offset 36 declares 2147483632");
}
TEST(WavHostile, OtherChunkSizePastEnd) {
  expect_error(riff(chunk("LIST", "ab", 0xFFFFFFFF) + kGoodFmt + kGoodData), "chunk 'LIST'");
}
TEST(WavHostile, TruncatedChunkHeader) {
  expect_error(riff(kGoodFmt + kGoodData + "dat"), "truncated chunk header");
}
TEST(WavHostile, NoDataChunk) {
  expect_error(riff(kGoodFmt), "no data chunk");
}
TEST(WavHostile, NoFmtChunk) {
  expect_error(riff(kGoodData), "no fmt chunk");
}
TEST(WavHostile, ShortFmt) {
  expect_error(riff(chunk("fmt ", "0123456789") + kGoodData), "fmt chunk has 10 bytes");
}
TEST(WavHostile, ZeroChannels) {
  expect_error(riff(chunk("fmt ", fmt_payload(1, 0, 16000, 16, 0)) + kGoodData), "0 channels");
}
TEST(WavHostile, TooManyChannels) {
  expect_error(riff(chunk("fmt ", fmt_payload(1, 1000, 16000, 16, 2000)) + kGoodData), "1000 channels");
}
TEST(WavHostile, ZeroSampleRate) {
  expect_error(riff(fmt_chunk(1, 1, 0, 16) + kGoodData), "sample rate of 0");
}
TEST(WavHostile, HugeSampleRate) {
  expect_error(riff(fmt_chunk(1, 1, 0xFFFFFFFF, 16) + kGoodData), "exceeds the limit");
  expect_error(riff(fmt_chunk(1, 1, 192001, 16) + kGoodData), "192001 Hz exceeds the limit of 192000 Hz");
}
TEST(WavHostile, TinySampleRate) {
  // 1 Hz would make the resampler to 16 kHz write 16,000 samples per input sample.
  expect_error(riff(fmt_chunk(1, 1, 1, 16) + kGoodData), "sample rate 1 Hz is below the minimum of 8000 Hz");
  expect_error(riff(fmt_chunk(1, 1, 7999, 16) + kGoodData), "7999 Hz is below the minimum");
}
TEST(WavHostile, BadBlockAlign) {
  expect_error(riff(chunk("fmt ", fmt_payload(1, 2, 16000, 16, 3)) + kGoodData), "block align 3");
}
TEST(WavHostile, OddBitDepth) {
  expect_error(riff(fmt_chunk(1, 1, 16000, 12) + kGoodData), "12 bits", ErrorCode::Unsupported);
}
TEST(WavHostile, Float16) {
  expect_error(riff(fmt_chunk(3, 1, 16000, 16) + kGoodData), "16 bits", ErrorCode::Unsupported);
}
TEST(WavHostile, CompressedFormat) {
  expect_error(riff(fmt_chunk(6, 1, 8000, 8) + kGoodData), "0x0006", ErrorCode::Unsupported);
}
TEST(WavHostile, PartialFrame) {
  expect_error(riff(fmt_chunk(1, 2, 16000, 16) + chunk("data", le16(1) + le16(2) + le16(3))),
               "not a whole number of frames");
}
TEST(WavHostile, DuplicateChunks) {
  expect_error(riff(kGoodFmt + kGoodFmt + kGoodData), "second fmt chunk");
  expect_error(riff(kGoodFmt + kGoodData + kGoodData), "second data chunk");
}
TEST(WavHostile, ExtensibleTooShort) {
  expect_error(riff(chunk("fmt ", fmt_payload(0xFFFE, 1, 16000, 16) + le16(0)) + kGoodData), "need 40");
}
TEST(WavHostile, ExtensibleBadGuid) {
  const std::string payload =
      fmt_payload(0xFFFE, 1, 16000, 16) + le16(22) + le16(16) + le32(4) + le16(1) + std::string(14, 'x');
  expect_error(riff(chunk("fmt ", payload) + kGoodData), "GUID", ErrorCode::Unsupported);
}
TEST(WavHostile, ExtensibleValidBitsTooLarge) {
  expect_error(riff(extensible_fmt(1, 1, 16, 24) + kGoodData), "24 valid bits exceed");
}
TEST(WavHostile, NonFiniteFloat) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_error(
      riff(fmt_chunk(3, 1, 16000, 32) + chunk("data", std::string(reinterpret_cast<const char*>(&nan), 4))),
      "non-finite float sample at frame 0");
}

}  // namespace
}  // namespace gpstream::audio
