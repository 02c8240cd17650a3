// Speech manifest reader: well-formed manifests written by hand (expected fields read off the text) and the
// committed fixture written by scripts/make-speech-data, then hostile manifests, one defect each, expecting
// an error that names the file and line and says what is wrong.
#include "speech/speech_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../testing/temp_dir.h"

namespace gpstream::speech {
namespace {

const std::string kHeader = "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms\n";
const std::string kFixture = std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/speech/";

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

SpeechManifest parse_ok(const std::string& text, const std::string& base = "") {
  auto r = parse_speech_manifest(as_bytes(text), "m.tsv", base);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r).value() : SpeechManifest{};
}

// The manifest must be rejected with a Format error whose message starts with `prefix` ("m.tsv:3:") and
// contains `what`.
void expect_error(const std::string& text, const std::string& prefix, const std::string& what) {
  auto r = parse_speech_manifest(as_bytes(text), "m.tsv", "base");
  ASSERT_FALSE(r.ok()) << "accepted: " << text;
  EXPECT_EQ(r.error().code(), ErrorCode::Format);
  EXPECT_EQ(r.error().message().rfind(prefix, 0), 0u) << r.error().message();
  EXPECT_NE(r.error().message().find(what), std::string::npos) << r.error().message();
}

// A manifest with the header, one good line, then `bad` as line 3.
void expect_bad_line(const std::string& bad, const std::string& what) {
  expect_error(kHeader + "wav/a.wav\tHello there.\ten-us+m1\t170\t50\t1234\n" + bad + "\n",
               "m.tsv:3: ", what);
}

TEST(SpeechManifest, ParsesFieldsAndResolvesPathsAgainstTheBase) {
  const auto m =
      parse_ok(kHeader +
                   "wav/a.wav\tHello there.\ten-us+m1\t170\t50\t1234\n"
                   "sub/dir/b.wav\tIt's \"quoted\" (twice) - ok; yes: no!\ten-gb-x-rp+klatt2\t80\t0\t1\n"
                   "c.wav\tCaf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x8E\xA4\ten\t1000\t99\t600000",
               "/data/speech/train");
  ASSERT_EQ(m.utterances.size(), 3u);
  EXPECT_EQ(m.path, "m.tsv");
  const auto& a = m.utterances[0];
  EXPECT_EQ(a.wav, "wav/a.wav");
  EXPECT_EQ(a.wav_path, "/data/speech/train/wav/a.wav");
  EXPECT_EQ(a.transcript, "Hello there.");
  EXPECT_EQ(a.voice, "en-us+m1");
  EXPECT_EQ(a.speed, 170u);
  EXPECT_EQ(a.pitch, 50u);
  EXPECT_EQ(a.duration_ms, 1234u);
  EXPECT_EQ(a.line, 2u);
  const auto& b = m.utterances[1];
  EXPECT_EQ(b.wav_path, "/data/speech/train/sub/dir/b.wav");
  EXPECT_EQ(b.transcript, "It's \"quoted\" (twice) - ok; yes: no!");
  EXPECT_EQ(b.voice, "en-gb-x-rp+klatt2");
  EXPECT_EQ(b.speed, 80u);
  EXPECT_EQ(b.pitch, 0u);
  EXPECT_EQ(b.duration_ms, 1u);
  const auto& c = m.utterances[2];  // last line without a newline; UTF-8 of 2, 3 and 4 bytes
  EXPECT_EQ(c.transcript, "Caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x8E\xA4");
  EXPECT_EQ(c.speed, 1000u);
  EXPECT_EQ(c.pitch, 99u);
  EXPECT_EQ(c.duration_ms, 600000u);
  EXPECT_EQ(c.line, 4u);
}

TEST(SpeechManifest, AcceptsCrLfAndAnEmptyBase) {
  const auto m =
      parse_ok("wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms\r\nx.wav\tHi.\ten\t170\t50\t300\r\n");
  ASSERT_EQ(m.utterances.size(), 1u);
  EXPECT_EQ(m.utterances[0].wav_path, "x.wav");
  EXPECT_EQ(m.utterances[0].duration_ms, 300u);
}

TEST(SpeechManifest, ReadsTheFixtureWrittenByTheScript) {
  auto train = read_speech_manifest(kFixture + "train/manifest.tsv");
  ASSERT_TRUE(train.ok()) << train.error().message();
  ASSERT_EQ(train->utterances.size(), 2u);
  EXPECT_EQ(train->utterances[0].wav, "wav/train-000001.wav");
  EXPECT_EQ(train->utterances[0].transcript, "Yes.");
  EXPECT_EQ(train->utterances[1].transcript, "Open it.");
  for (const auto& u : train->utterances) {
    EXPECT_TRUE(std::filesystem::exists(u.wav_path)) << u.wav_path;
    EXPECT_EQ(u.speed, 210u);
  }
  auto dev = read_speech_manifest(kFixture + "dev/manifest.tsv");
  ASSERT_TRUE(dev.ok()) << dev.error().message();
  ASSERT_EQ(dev->utterances.size(), 1u);
  EXPECT_EQ(dev->utterances[0].transcript, "Close.");
  // The voice split: no dev variant (the part after '+') occurs in train.
  const auto variant = [](const std::string& v) { return v.substr(v.find('+') + 1); };
  for (const auto& t : train->utterances) EXPECT_NE(variant(t.voice), variant(dev->utterances[0].voice));
}

TEST(SpeechManifest, MissingFileIsAnIoError) {
  auto r = read_speech_manifest("/nonexistent/manifest.tsv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Io);
  EXPECT_NE(r.error().message().find("/nonexistent/manifest.tsv"), std::string::npos);
}

TEST(SpeechManifest, RejectsBadHeadersAndEmptyManifests) {
  expect_error("", "m.tsv: ", "empty file");
  expect_error("\n", "m.tsv:1: ", "expected the header");
  expect_error("wav\ttranscript\tvoice\tspeed\tpitch\n", "m.tsv:1: ", "expected the header");
  expect_error("transcript\twav\tvoice\tspeed\tpitch\tduration_ms\n", "m.tsv:1: ", "expected the header");
  expect_error("a.wav\tHi.\ten\t170\t50\t300\n", "m.tsv:1: ", "expected the header");  // no header at all
  expect_error(kHeader, "m.tsv: ", "no utterances");
}

TEST(SpeechManifest, PlainManifestsHaveTwoFields) {
  // With a header (either name for the path column) or without, LF or CRLF; the other fields are unknown.
  for (const std::string header : {"audio\ttranscript\n", "wav\ttranscript\r\n", ""}) {
    const auto m =
        parse_ok(header + "rec/a.flac\tHello there.\r\nb.mp3\tIt's \"me\" \xE2\x80\x94 again!", "/data");
    ASSERT_EQ(m.utterances.size(), 2u) << header;
    const auto& a = m.utterances[0];
    EXPECT_EQ(a.wav, "rec/a.flac");
    EXPECT_EQ(a.wav_path, "/data/rec/a.flac");
    EXPECT_EQ(a.transcript, "Hello there.");
    EXPECT_FALSE(a.has_metadata);
    EXPECT_EQ(a.voice, "");
    EXPECT_EQ(a.speed, 0u);
    EXPECT_EQ(a.pitch, 0u);
    EXPECT_EQ(a.duration_ms, 0u);
    EXPECT_EQ(a.line, header.empty() ? 1u : 2u);
    EXPECT_EQ(m.utterances[1].transcript, "It's \"me\" \xE2\x80\x94 again!");
    EXPECT_EQ(m.utterances[1].line, header.empty() ? 2u : 3u);
  }
  EXPECT_TRUE(parse_ok(kHeader + "a.wav\tHi.\ten\t170\t50\t300\n").utterances[0].has_metadata);
}

TEST(SpeechManifest, RejectsBadPlainLines) {
  const std::string head = "audio\ttranscript\na.wav\tHi.\n";
  expect_error(head + "b.wav\tHi.\textra\n",
               "m.tsv:3: ", "expected 2 tab-separated fields (audio, transcript), got 3");
  expect_error(head + "b.wav\ten\t170\t50\t300\tHi.\n", "m.tsv:3: ", "got 6");
  expect_error(head + "b.wav\n", "m.tsv:3: ", "got 1");
  expect_error(head + "../b.wav\tHi.\n", "m.tsv:3: ", "'..' component");
  expect_error(head + "/abs/b.wav\tHi.\n", "m.tsv:3: ", "is absolute");
  expect_error(head + "b.wav\t  \n", "m.tsv:3: ", "transcript is empty");
  expect_error(head + "b.wav\tH\x01i\n", "m.tsv:3: ", "control character 0x01");
  expect_error(head + "a.wav\tAgain.\n", "m.tsv:3: ", "already listed on line 2");
  expect_error(head + "\n", "m.tsv:3: ", "empty line");
  expect_error("audio\ttranscript\n", "m.tsv: ", "no utterances");
  // A generated manifest's lines keep their six fields.
  expect_error(kHeader + "a.wav\tHi.\n", "m.tsv:2: ", "expected 6 tab-separated fields");
}

TEST(SpeechManifest, RejectsWrongFieldCounts) {
  expect_bad_line("wav/b.wav\tHi.\ten\t170\t50", "got 5");
  expect_bad_line("wav/b.wav\tHi.\ten\t170\t50\t300\textra", "got 7");
  expect_bad_line("wav/b.wav Hi. en 170 50 300", "got 1");
  expect_bad_line("wav/b.wav\tHi\tthere.\ten\t170\t50\t300", "got 7");  // a tab inside the transcript
  expect_bad_line("", "empty line");
}

TEST(SpeechManifest, RejectsBadWavPaths) {
  expect_bad_line("\tHi.\ten\t170\t50\t300", "wav path is empty");
  expect_bad_line("/etc/passwd\tHi.\ten\t170\t50\t300", "absolute");
  expect_bad_line("../x.wav\tHi.\ten\t170\t50\t300", "'..'");
  expect_bad_line("wav/../../x.wav\tHi.\ten\t170\t50\t300", "'..'");
  expect_bad_line("wav/..\tHi.\ten\t170\t50\t300", "'..'");
  expect_bad_line("wav\\x.wav\tHi.\ten\t170\t50\t300", "backslash");
  expect_bad_line("wav/\tHi.\ten\t170\t50\t300", "names a folder");
  expect_bad_line("wav/\x01.wav\tHi.\ten\t170\t50\t300", "control character");
  expect_bad_line("wav/a.wav\tHi.\ten\t170\t50\t300", "already listed on line 2");
  expect_bad_line(std::string(5000, 'a') + "\tHi.\ten\t170\t50\t300", "longer than 4096");
}

TEST(SpeechManifest, RejectsBadTranscripts) {
  expect_bad_line("b.wav\t\ten\t170\t50\t300", "transcript is empty");
  expect_bad_line("b.wav\t   \ten\t170\t50\t300", "transcript is empty");
  expect_bad_line(std::string("b.wav\tA\0B\ten\t170\t50\t300", 22), "control character 0x00 at byte 1");
  expect_bad_line("b.wav\tA\x7f\ten\t170\t50\t300", "control character 0x7F at byte 1");
  expect_bad_line("b.wav\tCaf\xE9\ten\t170\t50\t300", "invalid UTF-8 at byte 3");      // Latin-1
  expect_bad_line("b.wav\t\xC0\xAF\ten\t170\t50\t300", "invalid UTF-8");               // overlong '/'
  expect_bad_line("b.wav\t\xED\xA0\x80\ten\t170\t50\t300", "invalid UTF-8");           // surrogate
  expect_bad_line("b.wav\t\xF4\x90\x80\x80\ten\t170\t50\t300", "invalid UTF-8");       // > U+10FFFF
  expect_bad_line("b.wav\tok \xE2\x80\ten\t170\t50\t300", "invalid UTF-8 at byte 3");  // truncated
}

TEST(SpeechManifest, RejectsBadVoices) {
  expect_bad_line("b.wav\tHi.\t\t170\t50\t300", "voice is empty");
  expect_bad_line("b.wav\tHi.\ten us\t170\t50\t300", "outside [A-Za-z0-9+._-]");
  expect_bad_line("b.wav\tHi.\ten;rm\t170\t50\t300", "outside [A-Za-z0-9+._-]");
  expect_bad_line("b.wav\tHi.\t" + std::string(65, 'v') + "\t170\t50\t300", "longer than 64");
}

TEST(SpeechManifest, RejectsBadNumbers) {
  expect_bad_line("b.wav\tHi.\ten\t\t50\t300", "speed is empty");
  expect_bad_line("b.wav\tHi.\ten\t0\t50\t300", "speed 0 is outside [1, 1000]");
  expect_bad_line("b.wav\tHi.\ten\t1001\t50\t300", "speed 1001 is outside");
  expect_bad_line("b.wav\tHi.\ten\t-170\t50\t300", "speed '-170' is not a non-negative integer");
  expect_bad_line("b.wav\tHi.\ten\t+170\t50\t300", "not a non-negative integer");
  expect_bad_line("b.wav\tHi.\ten\t 170\t50\t300", "not a non-negative integer");
  expect_bad_line("b.wav\tHi.\ten\t170.0\t50\t300", "not a non-negative integer");
  expect_bad_line("b.wav\tHi.\ten\t170\t100\t300", "pitch 100 is outside [0, 99]");
  expect_bad_line("b.wav\tHi.\ten\t170\t5x\t300", "pitch '5x'");
  expect_bad_line("b.wav\tHi.\ten\t170\t50\t0", "duration_ms 0 is outside [1, 600000]");
  expect_bad_line("b.wav\tHi.\ten\t170\t50\t600001", "duration_ms 600001 is outside");
  expect_bad_line("b.wav\tHi.\ten\t170\t50\t99999999999999999999", "at most 9 digits");
  expect_bad_line("b.wav\tHi.\ten\t170\t50\t4294967296", "at most 9 digits");  // 2^32 would wrap
}

TEST(SpeechManifest, RejectsOverlongLines) {
  expect_bad_line("b.wav\t" + std::string(kSpeechManifestMaxLine, 'x') + "\ten\t170\t50\t300",
                  "longer than the limit");
}

TEST(SpeechManifest, ErrorsNameTheFileOnDisk) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("bad.tsv"), kHeader + "a.wav\tHi.\ten\t170\t50\tlong\n");
  auto r = read_speech_manifest(dir.file("bad.tsv"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().rfind(dir.file("bad.tsv") + ":2: duration_ms 'long'", 0), 0u)
      << r.error().message();
}

// Random byte edits of a valid manifest (deterministic): the parser must either accept the result or report
// an error that starts with the name, and never read out of bounds (which the ASan build checks).
TEST(SpeechManifest, MutatedManifestsAreAcceptedOrReportedNeverCrash) {
  const std::string good = kHeader +
                           "wav/a.wav\tHello there.\ten-us+m1\t170\t50\t1234\n"
                           "wav/b.wav\tIt's (fine).\ten-029+f3\t130\t30\t99\n";
  const char alphabet[] = {'\t', '\n', '\r', '\0', '/',    '.',    '0',   '9',
                           'a',  '+',  '-',  ' ',  '\x80', '\xC3', '\xFF'};
  uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = next() % text.size();
      switch (next() % 3) {
        case 0:
          text[at] = alphabet[next() % sizeof alphabet];
          break;
        case 1:
          text.erase(at, 1 + next() % 8);
          break;
        default:
          text.insert(at, 1, alphabet[next() % sizeof alphabet]);
          break;
      }
      if (text.empty()) text.push_back('x');
    }
    auto r = parse_speech_manifest(as_bytes(text), "m.tsv", "base");
    if (r.ok()) {
      ++accepted;
      for (const auto& u : r->utterances) {
        EXPECT_FALSE(u.wav.empty());
        EXPECT_NE(u.wav.front(), '/') << u.wav;
        EXPECT_EQ(("/" + u.wav + "/").find("/../"), std::string::npos) << u.wav;
        EXPECT_LE(u.pitch, 99u);
      }
    } else {
      EXPECT_EQ(r.error().message().rfind("m.tsv:", 0), 0u) << r.error().message();
    }
  }
  EXPECT_GT(accepted, 0);  // some edits (e.g. inside a transcript) keep the manifest valid
}

}  // namespace
}  // namespace gpstream::speech
