// Incremental WAV reader: files built byte by byte (expected samples computed by hand from the bytes, or the
// whole-file reader's for the same bytes) pushed in pieces of every size; recorders' streaming headers (RIFF
// and data sizes 0 or 0xFFFFFFFF); samples coming out before the stream ends; raw PCM; hostile streams, one
// defect each, expecting a clear error.
#include "audio/wav_stream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "../testing/wav_writer.h"

namespace gpstream::audio {
namespace {

using namespace testing::wav_bytes;

// Samples s as 16-bit words, and what they decode to (s / 32768, exact in float).
std::string pcm16(const std::vector<int16_t>& s) {
  std::string b;
  for (int16_t v : s) b += le16(static_cast<uint16_t>(v));
  return b;
}
std::vector<float> scaled(const std::vector<int16_t>& s) {
  std::vector<float> f;
  for (int16_t v : s) f.push_back(static_cast<float>(v / 32768.0));
  return f;
}
const std::vector<int16_t> kSamples = {0, 16384, -32768, 32767, -1, 1234, -4321, 8192, 7, -7, 100};

// Pushes `bytes` in pieces of `piece` bytes (0: all at once), then finishes; the samples, or the first error.
Result<std::vector<float>> stream_all(WavStream s, const std::string& bytes, size_t piece) {
  std::vector<float> out;
  const size_t step = piece ? piece : std::max<size_t>(1, bytes.size());
  for (size_t i = 0; i < bytes.size(); i += step)
    GPS_TRY(s.push(as_bytes(bytes.substr(i, std::min(step, bytes.size() - i))), out));
  GPS_TRY(s.finish());
  return out;
}

std::vector<float> stream_ok(const std::string& bytes, size_t piece) {
  auto r = stream_all(WavStream::wav("test.wav"), bytes, piece);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r).value() : std::vector<float>{};
}

void expect_stream_error(const std::string& bytes, const std::string& what,
                         ErrorCode code = ErrorCode::Format) {
  for (size_t piece : {size_t{1}, size_t{5}, size_t{0}}) {
    auto r = stream_all(WavStream::wav("bad.wav"), bytes, piece);
    ASSERT_FALSE(r.ok()) << "accepted a stream that should fail with '" << what << "' (pieces of " << piece
                         << ")";
    EXPECT_EQ(r.error().code(), code) << r.error().message();
    EXPECT_NE(r.error().message().find("bad.wav"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find(what), std::string::npos)
        << "message lacks '" << what << "': " << r.error().message();
  }
}

constexpr size_t kPieces[] = {1, 2, 3, 7, 44, 45, 4096, 0};

TEST(WavStream, AnyPiecesGiveTheWholeFileReadersSamples) {
  // Mono 16-bit; stereo 24-bit; 32-bit float; odd LIST chunk and a fact chunk before the data, a chunk after.
  std::string stereo24;
  for (int i = 0; i < 9; ++i) {
    const int32_t l = (i * 123457) % 8388607 - 4000000, r = -l / 3;
    for (int32_t v : {l, r})
      for (int b = 0; b < 3; ++b) stereo24 += static_cast<char>((static_cast<uint32_t>(v) >> (8 * b)) & 0xff);
  }
  const float f[3] = {0.25f, -1.5f, 1e-3f};
  const std::string files[] = {
      riff(fmt_chunk(1, 1, 16000, 16) + chunk("data", pcm16(kSamples))),
      riff(fmt_chunk(1, 2, 44100, 24) + chunk("data", stereo24)),
      riff(chunk("LIST", "abc") + fmt_chunk(3, 1, 48000, 32) + chunk("fact", le32(3)) +
           chunk("data", std::string(reinterpret_cast<const char*>(f), sizeof f)) + chunk("JUNK", "xy")),
  };
  for (const auto& file : files) {
    auto whole = read_wav(as_bytes(file), "test.wav");
    ASSERT_TRUE(whole.ok()) << whole.error().message();
    ASSERT_FALSE(whole->samples.empty());
    for (size_t piece : kPieces) EXPECT_EQ(stream_ok(file, piece), whole->samples) << "pieces of " << piece;
  }
  EXPECT_EQ(stream_ok(files[0], 3), scaled(kSamples));
}

TEST(WavStream, StreamingHeadersReadToTheEnd) {
  // What recorders write when they cannot seek back: sizes 0xFFFFFFFF, or 0 (RIFF and data).
  const std::string fmt = fmt_chunk(1, 1, 16000, 16);
  const std::string data = pcm16(kSamples);
  for (uint32_t riff_size : {0u, 0xFFFFFFFFu}) {
    for (uint32_t data_size : {0u, 0xFFFFFFFFu}) {
      const std::string file = "RIFF" + le32(riff_size) + "WAVE" + fmt + "data" + le32(data_size) + data;
      for (size_t piece : kPieces)
        EXPECT_EQ(stream_ok(file, piece), scaled(kSamples)) << riff_size << " " << data_size << " " << piece;
      // The whole-file reader agrees.
      auto whole = read_wav(as_bytes(file), "test.wav");
      ASSERT_TRUE(whole.ok()) << whole.error().message();
      EXPECT_EQ(whole->samples, scaled(kSamples));
    }
  }
  // A true RIFF size with a data size of 0 is an empty data chunk, not a placeholder; with a data size of
  // 0xFFFFFFFF the data ends with the RIFF form, as read_wav() reads it (the bytes after it are not samples).
  EXPECT_TRUE(stream_ok(riff(fmt + chunk("data", "")), 1).empty());
  const std::string form = riff(fmt + "data" + le32(0xFFFFFFFF) + data) + "JUNK";
  for (size_t piece : kPieces) EXPECT_EQ(stream_ok(form, piece), scaled(kSamples)) << piece;
}

TEST(WavStream, SamplesComeOutBeforeTheStreamEnds) {
  const std::string file = "RIFF" + le32(0xFFFFFFFF) + "WAVE" + fmt_chunk(1, 2, 16000, 16) + "data" +
                           le32(0xFFFFFFFF) + pcm16({100, 300, -200, -400, 8, 8});
  const size_t header = 12 + 24 + 8;
  WavStream s = WavStream::wav("live");
  std::vector<float> out;
  ASSERT_TRUE(s.push(as_bytes(file.substr(0, header - 1)), out).ok());
  EXPECT_FALSE(s.has_format());  // the data chunk header is not complete yet
  ASSERT_TRUE(s.push(as_bytes(file.substr(header - 1, 1 + 4 + 2)), out).ok());  // frame 0 and half of frame 1
  ASSERT_TRUE(s.has_format());
  EXPECT_EQ(s.format().sample_rate, 16000u);
  EXPECT_EQ(s.format().channels, 2);
  EXPECT_EQ(out, (std::vector<float>{static_cast<float>(200 / 32768.0)}));  // (100 + 300) / 2
  ASSERT_TRUE(s.push(as_bytes(file.substr(header + 6)), out).ok());
  EXPECT_EQ(out, (std::vector<float>{static_cast<float>(200 / 32768.0), static_cast<float>(-300 / 32768.0),
                                     static_cast<float>(8 / 32768.0)}));
  EXPECT_EQ(s.frames(), 3u);
  EXPECT_FALSE(s.done());
  EXPECT_TRUE(s.finish().ok());
}

TEST(WavStream, ADeclaredDataSizeIsTheMostRead) {
  // Bytes after the data chunk (here a LIST chunk and junk) are not samples; a stream that stops before its
  // declared size (an interrupted recorder: arecord declares 0x7fffff00) ends the audio there.
  const std::string fmt = fmt_chunk(1, 1, 16000, 16);
  const std::string file = riff(fmt + chunk("data", pcm16({1, 2, 3}))) + "LIST" + le32(2) + "ab";
  WavStream s = WavStream::wav("test.wav");
  std::vector<float> out;
  ASSERT_TRUE(s.push(as_bytes(file), out).ok());
  EXPECT_TRUE(s.done());
  EXPECT_EQ(out, scaled({1, 2, 3}));
  const std::string cut =
      "RIFF" + le32(0x7fffff24) + "WAVE" + fmt + "data" + le32(0x7fffff00) + pcm16({5, 6});
  for (size_t piece : kPieces) EXPECT_EQ(stream_ok(cut, piece), scaled({5, 6}));
}

TEST(WavStream, RawPcm) {
  // Interleaved stereo 16-bit: frames (1000, 3000), (-2, -4) → means 2000 and -3.
  auto s = WavStream::raw(WavSampleFormat::Int, 16, 2, 22050, "raw");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(s->has_format());
  EXPECT_EQ(s->format().sample_rate, 22050u);
  const std::string bytes = pcm16({1000, 3000, -2, -4});
  for (size_t piece : kPieces) {
    auto r = stream_all(*s, bytes, piece);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(*r, (std::vector<float>{static_cast<float>(2000 / 32768.0), static_cast<float>(-3 / 32768.0)}));
  }
  auto cut = stream_all(*s, bytes.substr(0, 7), 0);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message().find("ends inside a frame (3 of 4 bytes)"), std::string::npos)
      << cut.error().message();
  for (uint32_t rate : {0u, 1u, 7999u, 192001u, 0xFFFFFFFFu}) {
    auto bad = WavStream::raw(WavSampleFormat::Int, 16, 1, rate, "raw");
    ASSERT_FALSE(bad.ok()) << rate;
    EXPECT_NE(bad.error().message().find("sample rate"), std::string::npos) << bad.error().message();
  }
  EXPECT_TRUE(WavStream::raw(WavSampleFormat::Int, 16, 1, 8000, "raw").ok());
  EXPECT_TRUE(WavStream::raw(WavSampleFormat::Int, 16, 1, 192000, "raw").ok());
  EXPECT_FALSE(WavStream::raw(WavSampleFormat::Int, 16, 0, 16000, "raw").ok());
  EXPECT_FALSE(WavStream::raw(WavSampleFormat::Int, 16, 257, 16000, "raw").ok());
}

TEST(WavStream, MutatedFilesAgreeWithTheWholeFileReaderWhenBothAccept) {
  // 5,000 seeded byte edits (overwrites, inserts, cuts) of valid files: the stream reader never crashes, and
  // whenever both readers accept the bytes they give the same samples (the stream only refuses more:
  // data before fmt, over-long fmt chunks; and accepts more: a stream cut before a declared size).
  const std::string seeds[] = {
      riff(fmt_chunk(1, 1, 16000, 16) + chunk("data", pcm16(kSamples))),
      "RIFF" + le32(0xFFFFFFFF) + "WAVE" + fmt_chunk(1, 2, 8000, 16) + "data" + le32(0) + pcm16(kSamples) +
          "x",
      riff(chunk("LIST", "abc") + fmt_chunk(3, 1, 48000, 32) + chunk("data", std::string(8, '\0')) +
           chunk("JUNK", "x")),
  };
  uint64_t x = 42;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  int both = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string f = seeds[i % 3];
    for (int e = 0, n = 1 + static_cast<int>(next() % 3); e < n; ++e) {
      const size_t at = next() % f.size();
      switch (next() % 3) {
        case 0:
          f[at] = static_cast<char>(next());
          break;
        case 1:
          f.insert(at, 1, static_cast<char>(next()));
          break;
        default:
          f.erase(at, 1 + next() % 8);
          break;
      }
      if (f.empty()) f.push_back('R');
    }
    auto whole = read_wav(as_bytes(f), "m.wav");
    auto streamed = stream_all(WavStream::wav("m.wav"), f, 1 + next() % 17);
    if (whole.ok() && streamed.ok()) {
      ++both;
      ASSERT_EQ(*streamed, whole->samples) << "edit " << i;
    }
    if (!streamed.ok()) {
      ASSERT_FALSE(streamed.error().message().empty());
    }
  }
  EXPECT_GT(both, 100);  // the property was exercised
}

const std::string kFmt = fmt_chunk(1, 1, 16000, 16);

TEST(WavStreamHostile, SampleRatesOutsideTheSpeechRange) {
  // 1 Hz would make the 16 kHz resampler write 16,000 samples per input sample.
  expect_stream_error(riff(fmt_chunk(1, 1, 1, 16) + chunk("data", pcm16({1}))),
                      "sample rate 1 Hz is below the minimum of 8000 Hz");
  expect_stream_error(riff(fmt_chunk(1, 1, 0, 16) + chunk("data", pcm16({1}))), "sample rate of 0");
  expect_stream_error(riff(fmt_chunk(1, 1, 0xFFFFFFFF, 16) + chunk("data", pcm16({1}))),
                      "exceeds the limit of 192000 Hz");
}

TEST(WavStreamHostile, HugeSizes) {
  // A fmt chunk that claims 4 GiB, other chunks that claim more than the skip bound: refused before reading
  // on.
  expect_stream_error(riff(std::string("fmt ") + le32(0xFFFFFFF0) + "x"), "declares 4294967280 bytes");
  expect_stream_error(riff(std::string("LIST") + le32(0x7FFFFFFF) + "x"),
                      "more than 16777216 bytes of other chunks");
  std::string many;  // many small chunks add up to the bound too
  for (int i = 0; i < 3; ++i) many += "JUNK" + le32(0x00700000);
  WavStream s = WavStream::wav("bad.wav");
  std::vector<float> out;
  ASSERT_TRUE(s.push(as_bytes("RIFF" + le32(0) + "WAVE" + kFmt + many.substr(0, 8)), out).ok());
  ASSERT_TRUE(s.push(as_bytes(std::string(0x00700000, 'j') + many.substr(8, 8)), out).ok());
  ASSERT_TRUE(s.push(as_bytes(std::string(0x00700000, 'j')), out).ok());
  auto third = s.push(as_bytes(many.substr(16, 8)), out);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.error().message().find("more than 16777216"), std::string::npos) << third.error().message();
  EXPECT_FALSE(s.push(as_bytes(pcm16({1})), out).ok());  // a failed stream stays failed
  EXPECT_TRUE(out.empty());
}

TEST(WavStreamHostile, Truncated) {
  expect_stream_error("", "empty stream");
  expect_stream_error("RIFF" + le32(0), "truncated header");
  expect_stream_error(riff(kFmt).substr(0, 20), "truncated header");
  expect_stream_error(riff(kFmt.substr(0, 14)), "inside the fmt chunk");
  expect_stream_error(riff(kFmt), "before the data chunk");
  expect_stream_error(riff(kFmt + "da"), "before the data chunk");
  expect_stream_error("RIFF" + le32(0) + "WAVE" + kFmt + "data" + le32(0) + pcm16({1, 2}) + "x",
                      "ends inside a frame (1 of 2 bytes)");
  expect_stream_error(riff(kFmt + "data" + le32(3) + pcm16({1, 2})), "the data chunk ends inside a frame");
}

TEST(WavStreamHostile, MalformedHeaders) {
  expect_stream_error("RIFX" + le32(4) + "WAVE", "RIFX", ErrorCode::Unsupported);
  expect_stream_error("RF64" + le32(0xFFFFFFFF) + "WAVE", "RF64", ErrorCode::Unsupported);
  expect_stream_error("OggS" + le32(0) + "WAVE", "not a RIFF/WAVE stream");
  expect_stream_error("RIFF" + le32(4) + "AVI ", "not WAVE");
  expect_stream_error("RIFF" + le32(2) + "WAVE", "RIFF size 2 is too small");
  expect_stream_error(riff(chunk("data", pcm16({1})) + kFmt), "before the fmt chunk");
  expect_stream_error(riff(kFmt + kFmt + chunk("data", pcm16({1}))), "a second fmt chunk");
  expect_stream_error(riff(chunk("fmt ", "0123456789") + chunk("data", "")), "fmt chunk has 10 bytes");
  expect_stream_error(riff(fmt_chunk(6, 1, 8000, 8) + chunk("data", "")), "0x0006", ErrorCode::Unsupported);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_stream_error(
      riff(fmt_chunk(3, 1, 16000, 32) + chunk("data", std::string(reinterpret_cast<const char*>(&nan), 4))),
      "non-finite float sample at frame 0");
}

}  // namespace
}  // namespace gpstream::audio
