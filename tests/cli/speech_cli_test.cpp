// End-to-end checks of `gpstream transcribe` and `gpstream eval --speech` on a tiny random speech model:
// usage errors (exit 2) and other errors (exit 1, one line on stderr); the printed words and delays equal a
// SpeechTranscriber run in this process on the same audio; eval --speech's instances.log is accepted by
// `gpstream score --speech`, which scores it to the numbers eval printed; the text eval still runs.
// Skipped when the gpstream binary is not built (GPSTREAM_TESTS_ONLY builds).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../testing/temp_dir.h"
#include "../testing/tiny_speech_model.h"
#include "../testing/wav_writer.h"
#include "audio/resample.h"
#include "audio/wav.h"
#include "cli_run.h"
#include "speech/speech_transcriber.h"

namespace gpstream {
namespace {

using nlohmann::json;
using testing::read_bytes;
using testing::run_gpstream;
using testing::write_wav16;
using testing::wav_bytes::le32;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/speech_cli_test_tmp/" + std::to_string(getpid());
const std::string kFixtureWav =
    std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/speech/train/wav/train-000002.wav";

testing::CommandRun run(const std::string& args) {
  return run_gpstream(kDir, args);
}

// A shell command line run in the test folder (for pipes and writer processes); GPSTREAM is the binary.
testing::CommandRun run_sh(const std::string& command) {
  return testing::run_command(
      "cd " + kDir + " && GPSTREAM=" + testing::kGpstreamBin + " sh -c '" + command + "'",
      kDir + "/stderr_sh.txt");
}

std::vector<float> test_audio(size_t n, double f0) {
  std::vector<float> s(n);
  uint64_t x = n * 7919 + 1;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / 16000.0;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const double noise = static_cast<double>(x >> 11) / 9007199254740992.0 - 0.5;
    s[i] = static_cast<float>(0.3 * std::sin(2 * M_PI * (f0 + 400.0 * t) * t) + 0.05 * noise);
  }
  return s;
}

void write_text(const std::string& name, const std::string& text) {
  std::ofstream(kDir + "/" + name) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SpeechCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(testing::kGpstreamBin)) return;
    std::filesystem::create_directories(kDir + "/wav");
    ASSERT_TRUE(testing::write_tiny_speech_model(kDir + "/model").ok());
    // A manifest of three 16 kHz utterances (1.2 s, 1.7 s, 0.9 s).
    std::string manifest = "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms\n";
    const size_t lengths[] = {19200, 27200, 14400};
    const char* texts[] = {"Close the door.", "Open it, please!", "Yes."};
    for (int i = 0; i < 3; ++i) {
      const std::string name = "wav/utt" + std::to_string(i) + ".wav";
      write_wav16(kDir + "/" + name, test_audio(lengths[i], 150.0 + 100.0 * i), 16000);
      manifest += name + "\t" + texts[i] + "\ten-us+m1\t170\t50\t" + std::to_string(lengths[i] / 16) + "\n";
    }
    write_text("manifest.tsv", manifest);
    write_wav16(kDir + "/long.wav", test_audio(32000, 220.0), 16000);
    write_text("not_a_wav.wav", "hello, I am text\n");
  }
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
  }
};

// What transcribe must print: the library's transcriber, fed 10 ms pieces of the resampled audio.
std::vector<speech::TranscribedWord> library_words(const std::string& wav_path, int k = 0,
                                                   bool end_after_source = false) {
  auto m = speech::SpeechModel::load(kDir + "/model", 1);
  EXPECT_TRUE(m.ok());
  stream::SessionOptions so = m->llm.default_options();
  if (k) so.k = k;
  so.end_after_source = end_after_source;
  so.max_target_tokens = 256;
  auto t = speech::SpeechTranscriber::create(*m, so);
  EXPECT_TRUE(t.ok());
  auto wav = audio::read_wav_file(wav_path);
  EXPECT_TRUE(wav.ok());
  auto pcm = audio::resample(wav->samples, wav->sample_rate, 16000);
  EXPECT_TRUE(pcm.ok());
  std::vector<speech::TranscribedWord> out;
  for (size_t i = 0; i < pcm->size(); i += 160)
    EXPECT_TRUE((*t)->push(pcm->data() + i, std::min<size_t>(160, pcm->size() - i), out).ok());
  EXPECT_TRUE((*t)->finish(out).ok());
  return out;
}

std::string joined(const std::vector<speech::TranscribedWord>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w.text;
  return s;
}

TEST_F(SpeechCli, TranscribeUsageErrors) {
  for (const char* args :
       {"transcribe --wav long.wav", "transcribe -m model", "transcribe -m model --wav long.wav --pace 0",
        "transcribe -m model --wav long.wav --pace=-1", "transcribe -m model --wav long.wav -k 0",
        "transcribe -m model --wav long.wav --phi x", "transcribe -m model --wav long.wav --paradigm nope",
        "transcribe -m model --wav long.wav --bogus",
        "transcribe -m model --wav long.wav --end-after-source maybe",
        "transcribe -m model --wav - --wav - < long.wav"}) {
    auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST_F(SpeechCli, TranscribeErrors) {
  auto missing = run("transcribe -m model --wav nowhere.wav");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("gpstream transcribe: "), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("nowhere.wav"), std::string::npos) << missing.err;
  auto text = run("transcribe -m model --wav not_a_wav.wav");
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.err.find("not_a_wav.wav"), std::string::npos) << text.err;
  EXPECT_EQ(std::count(text.err.begin(), text.err.end(), '\n'), 1) << text.err;
  auto stdin_text = run("transcribe -m model --wav - < not_a_wav.wav");
  EXPECT_EQ(stdin_text.code, 1);
  EXPECT_NE(stdin_text.err.find("<stdin>"), std::string::npos) << stdin_text.err;
  std::filesystem::create_directories(kDir + "/no_encoder");
  auto no_enc = run("transcribe -m no_encoder --wav long.wav");
  EXPECT_EQ(no_enc.code, 1);
  EXPECT_NE(no_enc.err.find("speech_encoder.safetensors"), std::string::npos) << no_enc.err;
}

TEST_F(SpeechCli, TranscribePrintsTheTranscribersWordsAndDelays) {
  const auto want = library_words(kDir + "/long.wav");
  ASSERT_FALSE(want.empty());
  auto r = run("transcribe -m model --wav long.wav --delays -t 1");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.size(), 3u);
  EXPECT_EQ(j.at("prediction").get<std::string>(), joined(want));
  const auto delays = j.at("delays").get<std::vector<double>>();
  const auto elapsed = j.at("elapsed").get<std::vector<double>>();
  ASSERT_EQ(delays.size(), want.size());
  ASSERT_EQ(elapsed.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(delays[i], want[i].delay_ms) << i;
    EXPECT_GE(elapsed[i], delays[i]) << i;
  }
  // Plain output, stdin, pacing and a second file give the same transcript.
  auto plain = run("transcribe -m model --wav long.wav");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out, joined(want) + "\n");
  auto piped = run("transcribe -m model --wav - < long.wav");
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.out, plain.out);
  auto paced = run("transcribe -m model --wav long.wav --pace 40 --delays");
  ASSERT_EQ(paced.code, 0) << paced.err;
  EXPECT_EQ(json::parse(paced.out).at("delays").get<std::vector<double>>(), delays);
  const auto fixture_words = library_words(kFixtureWav, 1);  // 22.05 kHz espeak-ng speech, resampled
  auto two = run("transcribe -m model -k 1 --wav long.wav --wav " + kFixtureWav);
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(two.out, joined(library_words(kDir + "/long.wav", 1)) + "\n" + joined(fixture_words) + "\n");
  // --end-after-source on: the transcriber with SessionOptions::end_after_source.
  auto ending = run("transcribe -m model -k 1 --end-after-source on --wav " + kFixtureWav);
  ASSERT_EQ(ending.code, 0) << ending.err;
  EXPECT_EQ(ending.out, joined(library_words(kFixtureWav, 1, true)) + "\n");
}

TEST_F(SpeechCli, EvalSpeechUsageErrors) {
  EXPECT_EQ(run("eval --speech -m model").code, 2);
  EXPECT_EQ(run("eval --speech --manifest manifest.tsv").code, 2);
  for (const char* bad : {"--phi x", "--phi 0 --phi y", "-k 0", "--paradigm nope",
                          "--wer-normalization whisper", "--tsv x.tsv", "--end-after-source yes"}) {
    auto r = run(std::string("eval --speech -m model --manifest manifest.tsv ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_FALSE(r.err.empty()) << bad;
  }
  auto missing = run("eval --speech -m model --manifest nowhere.tsv");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("nowhere.tsv"), std::string::npos) << missing.err;
  write_text("bad_manifest.tsv", "wav\ttranscript\tvoice\n");
  auto bad = run("eval --speech -m model --manifest bad_manifest.tsv");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("bad_manifest.tsv:1"), std::string::npos) << bad.err;
  write_text(
      "short_manifest.tsv",
      "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms\nwav/utt0.wav\tClose.\ten-us+m1\t170\t50\t900\n");
  auto wrong_length = run("eval --speech -m model --manifest short_manifest.tsv");
  EXPECT_EQ(wrong_length.code, 1);
  EXPECT_NE(wrong_length.err.find("utt0.wav"), std::string::npos) << wrong_length.err;
}

// Instance lines without the elapsed times (which depend on the machine's speed).
std::string strip_elapsed(const std::string& text) {
  std::string out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    json j = json::parse(text.substr(start, nl - start));
    j.erase("elapsed");
    out += j.dump() + "\n";
  }
  return out;
}

TEST_F(SpeechCli, EvalSpeechLogIsScoredToTheSameNumbers) {
  auto r = run(
      "eval --speech -m model --manifest manifest.tsv -k 1 -k 3 --phi 0 --phi 4 --output out --json -t 1");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<json> lines;
  size_t start = 0;
  for (size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(json::parse(r.out.substr(start, nl - start)));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  const char* labels[] = {"group-k1-phi0", "group-k1-phi4", "group-k3-phi0", "group-k3-phi4"};
  for (size_t i = 0; i < 4; ++i) {
    const json& e = lines[i];
    EXPECT_EQ(e.at("k").get<int>(), i < 2 ? 1 : 3);
    EXPECT_EQ(e.at("phi").get<std::string>(), i % 2 ? "4" : "0");
    EXPECT_EQ(e.at("end_after_source"), false);
    EXPECT_EQ(e.at("utterances").get<int>(), 3);
    EXPECT_NEAR(e.at("audio_seconds").get<double>(), 1.2 + 1.7 + 0.9, 1e-9);
    EXPECT_GT(e.at("rtf").get<double>(), 0.0);
    const std::string dir = std::string("out/") + labels[i];
    const std::string log = read_text(kDir + "/" + dir + "/instances.log");
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3) << log;
    EXPECT_NE(log.find("\"source\": [\"wav/utt1.wav\"], \"source_length\": 1700.0}"), std::string::npos)
        << log;
    auto s = run("score --speech --instances " + dir + "/instances.log --json --output " + dir + "/rescored");
    ASSERT_EQ(s.code, 0) << s.err;
    const json sj = json::parse(s.out);
    for (const char* key : {"WER", "LAAL", "LAAL_CA", "AL", "AL_CA", "AP", "AP_CA", "DAL", "DAL_CA", "ATD",
                            "ATD_CA", "wer_substitutions", "wer_deletions", "wer_insertions",
                            "wer_reference_words", "wer_hypothesis_words"}) {
      ASSERT_TRUE(e.contains(key)) << key;
      EXPECT_EQ(e.at(key), sj.at(key)) << labels[i] << " " << key;
    }
    EXPECT_EQ(read_text(kDir + "/" + dir + "/scores.tsv"),
              read_text(kDir + "/" + dir + "/rescored/scores.tsv"));
    EXPECT_EQ(e.at("wer_reference_words").get<int>(), 3 + 3 + 1);
  }
  // The same run again: the same predictions and delays (seeded noise, greedy decoding).
  auto again = run("eval --speech -m model --manifest manifest.tsv -k 3 --phi 4 --output again --json -t 1");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(strip_elapsed(read_text(kDir + "/again/group-k3-phi4/instances.log")),
            strip_elapsed(read_text(kDir + "/out/group-k3-phi4/instances.log")));
  // --end-after-source on: said in the JSON line and in the folder's name.
  auto ending =
      run("eval --speech -m model --manifest manifest.tsv -k 1 --phi 0 --end-after-source on --output eas "
          "--json -t 1");
  ASSERT_EQ(ending.code, 0) << ending.err;
  EXPECT_EQ(json::parse(ending.out).at("end_after_source"), true);
  EXPECT_EQ(
      std::count_if(std::filesystem::directory_iterator(kDir + "/eas"), std::filesystem::directory_iterator(),
                    [](const auto& e) { return e.is_directory(); }),
      1);
  EXPECT_TRUE(std::filesystem::exists(kDir + "/eas/group-k1-phi0-end-after-source/instances.log"));
  // --beam (word beam search): said in the JSON line (this model's default: 1); 0 is bad usage.
  EXPECT_EQ(lines[0].at("beam"), 1);
  auto beam = run("eval --speech -m model --manifest manifest.tsv -k 1 --phi 0 --beam 3 --json -t 1");
  ASSERT_EQ(beam.code, 0) << beam.err;
  EXPECT_EQ(json::parse(beam.out).at("beam"), 3);
  EXPECT_EQ(run("eval --speech -m model --manifest manifest.tsv --beam 0 -t 1").code, 2);
  // The table: a header and one row per (k, phi); --limit.
  auto table = run("eval --speech -m model --manifest manifest.tsv --noise --limit 2 -t 1");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 2) << table.out;
  EXPECT_EQ(table.out.rfind("paradigm", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("\ngroup                     2      0 "), std::string::npos) << table.out;
  EXPECT_EQ(run("eval --speech -m model --manifest manifest.tsv --no-noise -t 1").code,
            2);  // noise is opt-in now
}

TEST_F(SpeechCli, EvalSpeechReadsAPlainManifestAndTheAudioAsGiven) {
  // The same three utterances as audio<TAB>transcript lines (one header, paths relative to the manifest's
  // folder, which is not the working folder): the same instances as the generated manifest, clean by default.
  std::filesystem::create_directories(kDir + "/plain");
  write_text("plain/list.tsv",
             "audio\ttranscript\n../wav/utt0.wav\tClose the door.\n../wav/utt1.wav\tOpen it, please!\n"
             "../wav/utt2.wav\tYes.\n");
  auto dotdot = run("eval --speech -m model --manifest plain/list.tsv -t 1");
  EXPECT_EQ(dotdot.code, 1);  // paths must stay inside the manifest's folder
  EXPECT_NE(dotdot.err.find("plain/list.tsv:2: "), std::string::npos) << dotdot.err;
  write_text("plain.tsv",
             "audio\ttranscript\nwav/utt0.wav\tClose the door.\nwav/utt1.wav\tOpen it, please!\n"
             "wav/utt2.wav\tYes.\n");
  write_text("bare.tsv",
             "wav/utt0.wav\tClose the door.\nwav/utt1.wav\tOpen it, please!\nwav/utt2.wav\tYes.\n");
  const std::string opts = " -k 2 --phi 0 --json -t 1 --output ";
  auto gen = run("eval --speech -m model --manifest manifest.tsv" + opts + "gen");
  ASSERT_EQ(gen.code, 0) << gen.err;
  for (const char* m : {"plain", "bare"}) {
    auto r = run(std::string("eval --speech -m model --manifest ") + m + ".tsv" + opts + m);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out).at("utterances").get<int>(), 3);
    EXPECT_EQ(strip_elapsed(read_text(kDir + "/" + m + "/group-k2-phi0/instances.log")),
              strip_elapsed(read_text(kDir + "/gen/group-k2-phi0/instances.log")))
        << m;
  }
  // --noise: the loader's seeded noise, keyed by the path as written, so the same for both manifests.
  auto noisy = run("eval --speech -m model --manifest manifest.tsv" + opts + "noisy --noise");
  ASSERT_EQ(noisy.code, 0) << noisy.err;
  auto noisy2 = run("eval --speech -m model --manifest plain.tsv" + opts + "noisy2 --noise");
  ASSERT_EQ(noisy2.code, 0) << noisy2.err;
  EXPECT_EQ(strip_elapsed(read_text(kDir + "/noisy/group-k2-phi0/instances.log")),
            strip_elapsed(read_text(kDir + "/noisy2/group-k2-phi0/instances.log")));
  // A plain manifest's lines have two fields.
  write_text("plain_bad.tsv", "audio\ttranscript\nwav/utt0.wav\tClose.\textra\n");
  auto bad = run("eval --speech -m model --manifest plain_bad.tsv -t 1");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("plain_bad.tsv:2: expected 2 tab-separated fields"), std::string::npos) << bad.err;
}

// A file of bytes in the test folder.
void write_bytes(const std::string& name, const std::string& bytes) {
  std::ofstream(kDir + "/" + name, std::ios::binary) << bytes;
}
// write_wav16's files: a 44-byte header (RIFF size at 4, data size at 40), then the samples.
std::string with_sizes(std::string wav, uint32_t riff_size, uint32_t data_size) {
  return wav.replace(4, 4, le32(riff_size)).replace(40, 4, le32(data_size));
}

TEST_F(SpeechCli, TranscribeReadsStreamingWavHeadersFromAPipe) {
  // What `arecord | gpstream transcribe --wav -` sends: sizes a recorder cannot fill in. Each reads to the
  // end of the pipe and gives the words and delays of the file.
  const auto want = library_words(kDir + "/long.wav", 1);
  ASSERT_FALSE(want.empty());
  auto file = run("transcribe -m model -k 1 --wav long.wav --delays -t 1");
  ASSERT_EQ(file.code, 0) << file.err;
  const std::string wav = read_bytes(kDir + "/long.wav");
  ASSERT_EQ(wav.size(), 44u + 64000u);
  const std::pair<uint32_t, uint32_t> sizes[] = {{0, 0}, {0xFFFFFFFF, 0xFFFFFFFF}, {0x7fffff24, 0x7fffff00}};
  for (const auto& [riff_size, data_size] : sizes) {
    write_bytes("streamed.wav", with_sizes(wav, riff_size, data_size));
    auto r = run("transcribe -m model -k 1 --wav - --delays -t 1 < streamed.wav");
    ASSERT_EQ(r.code, 0) << riff_size << ": " << r.err;
    const json j = json::parse(r.out), f = json::parse(file.out);
    EXPECT_EQ(j.at("prediction"), f.at("prediction")) << riff_size;
    EXPECT_EQ(j.at("delays"), f.at("delays")) << riff_size;
    // Through a real pipe (cat), too.
    auto piped = run_sh("cat streamed.wav | $GPSTREAM transcribe -m model -k 1 --wav - -t 1");
    ASSERT_EQ(piped.code, 0) << piped.err;
    EXPECT_EQ(piped.out, joined(want) + "\n");
  }
}

TEST_F(SpeechCli, TranscribeWritesWordsBeforeThePipeCloses) {
  // A writer sends the header and the first half of the audio, then waits (up to 60 s) until the reader has
  // printed a word (--live flushes each word) before sending the rest: the words of the first half must come
  // out while the pipe is still open.
  const auto want = library_words(kDir + "/long.wav", 1);
  ASSERT_FALSE(want.empty());
  ASSERT_LE(want.front().delay_ms + 200, 1000.0)
      << "the first word needs more than the first second of audio";
  const std::string wav = with_sizes(read_bytes(kDir + "/long.wav"), 0xFFFFFFFF, 0xFFFFFFFF);
  write_bytes("first.bin", wav.substr(0, 44 + 32000));
  write_bytes("second.bin", wav.substr(44 + 32000));
  std::filesystem::remove(kDir + "/early.txt");
  auto r = run_sh(
      "(cat first.bin; i=0; while [ ! -s live.txt ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
      "if [ -s live.txt ]; then echo yes > early.txt; else echo no > early.txt; fi; cat second.bin) | "
      "$GPSTREAM transcribe -m model -k 1 --wav - --live -t 1 > live.txt && cat live.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(kDir + "/early.txt"), "yes\n") << "no word before the second half was written";
  EXPECT_EQ(r.out, joined(want) + "\n");
  EXPECT_EQ(run("transcribe -m model --wav long.wav --live --delays").code, 2);
  EXPECT_EQ(run("transcribe -m model --wav long.wav --live --plain").code, 2);
}

TEST_F(SpeechCli, TranscribeReadsRawPcm) {
  // The data chunk alone, at the file's rate; as interleaved stereo (each sample twice: the same mean); 22.05
  // kHz espeak-ng speech, resampled as its WAV is.
  const std::string wav = read_bytes(kDir + "/long.wav");
  write_bytes("long.raw", wav.substr(44));
  std::string stereo;
  for (size_t i = 44; i + 1 < wav.size(); i += 2) stereo += wav.substr(i, 2) + wav.substr(i, 2);
  write_bytes("long_stereo.raw", stereo);
  const std::string want = joined(library_words(kDir + "/long.wav", 1)) + "\n";
  for (const char* args : {"--raw --rate 16000 --wav long.raw", "--raw --rate 16000 --wav - < long.raw",
                           "--raw --rate 16000 --channels 2 --wav long_stereo.raw"}) {
    auto r = run(std::string("transcribe -m model -k 1 -t 1 ") + args);
    ASSERT_EQ(r.code, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out, want) << args;
  }
  const std::string fixture = read_bytes(kFixtureWav);
  write_bytes("fixture.raw", fixture.substr(44));
  auto r = run("transcribe -m model -k 1 -t 1 --raw --rate 22050 --wav - < fixture.raw");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, joined(library_words(kFixtureWav, 1)) + "\n");
  // Usage: --raw needs --rate, which must be a speech rate; --rate and --channels need --raw.
  for (const char* args :
       {"--raw --wav long.raw", "--raw --rate 1 --wav long.raw", "--raw --rate 7999 --wav long.raw",
        "--raw --rate 192001 --wav long.raw", "--raw --rate 16000 --channels 0 --wav long.raw",
        "--rate 16000 --wav long.wav", "--channels 2 --wav long.wav"}) {
    auto u = run(std::string("transcribe -m model ") + args);
    EXPECT_EQ(u.code, 2) << args << ": " << u.err;
    EXPECT_FALSE(u.err.empty()) << args;
  }
  write_bytes("odd.raw", wav.substr(44, 101));  // 50 samples and a half
  auto odd = run("transcribe -m model --raw --rate 16000 --wav odd.raw");
  EXPECT_EQ(odd.code, 1);
  EXPECT_NE(odd.err.find("odd.raw: the stream ends inside a frame (1 of 2 bytes)"), std::string::npos)
      << odd.err;
}

TEST_F(SpeechCli, TranscribeRefusesHostileStreams) {
  const std::string wav = read_bytes(kDir + "/long.wav");
  std::string one_hz = wav;
  one_hz.replace(24, 4, le32(1));  // the fmt chunk's sample rate
  write_bytes("one_hz.wav", one_hz);
  write_bytes("cut.wav", wav.substr(0, 30));
  write_bytes("huge_fmt.wav", wav.substr(0, 16) + le32(0xFFFFFFF0) + wav.substr(20));
  const std::pair<const char*, const char*> cases[] = {
      {"--wav - < one_hz.wav", "<stdin>: sample rate 1 Hz is below the minimum of 8000 Hz"},
      {"--wav one_hz.wav", "one_hz.wav: sample rate 1 Hz is below the minimum of 8000 Hz"},
      {"--wav - < cut.wav", "<stdin>: the stream ends inside the fmt chunk after 30 bytes"},
      {"--wav - < huge_fmt.wav", "declares 4294967280 bytes"},
      {"--wav - < /dev/null", "<stdin>: empty stream"},
  };
  for (const auto& [args, what] : cases) {
    auto r = run(std::string("transcribe -m model ") + args);
    EXPECT_EQ(r.code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(SpeechCli, TranscribeReadsFlacThroughLibsndfile) {
  // FLAC is lossless: the same samples, so the same words as the WAV it was made from (sox writes it).
  if (std::system("command -v sox > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "sox not installed (scripts/setup installs it)";
  ASSERT_EQ(run_sh("sox long.wav long.flac").code, 0);
  auto r = run("transcribe -m model -k 1 -t 1 --audio long.flac --delays");
  ASSERT_EQ(r.code, 0) << r.err;
  auto w = run("transcribe -m model -k 1 -t 1 --wav long.wav --delays");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(json::parse(r.out).at("delays"), json::parse(w.out).at("delays"));
  EXPECT_EQ(json::parse(r.out).at("prediction"), json::parse(w.out).at("prediction"));
}

TEST_F(SpeechCli, TheShippedModelReadsTheAudioToItsEnd) {
  // espeak-ng speech (22.05 kHz, a 44-byte header, n 16-bit samples) as a file, as a streaming-header pipe
  // and as raw PCM: the last word is written once every chunk, the partial last one included, has been read,
  // so its delay is the whole audio: the ceil(n * 320 / 441) samples at 16 kHz, / 16 per ms.
  const std::string model = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-speech-en";
  const std::string wav_path =
      std::string(GPSTREAM_SOURCE_DIR) + "/tests/speech/data/shipped-dev/wav/dev-000002.wav";
  const std::string wav = read_bytes(wav_path);
  ASSERT_GT(wav.size(), 44u);
  const uint64_t n = (wav.size() - 44) / 2;
  const double audio_ms = static_cast<double>((n * 320 + 440) / 441) / 16.0;
  write_bytes("dev2_streamed.wav", with_sizes(wav, 0xFFFFFFFF, 0xFFFFFFFF));
  write_bytes("dev2.raw", wav.substr(44));
  std::string first;
  for (const std::string& input : {"--wav " + wav_path, std::string("--wav - < dev2_streamed.wav"),
                                   std::string("--raw --rate 22050 --wav - < dev2.raw")}) {
    auto r = run("transcribe -m " + model + " -t 1 --delays " + input);
    ASSERT_EQ(r.code, 0) << input << ": " << r.err;
    const json j = json::parse(r.out);
    const auto delays = j.at("delays").get<std::vector<double>>();
    ASSERT_GE(delays.size(), 5u) << r.out;
    EXPECT_EQ(delays.back(), audio_ms) << input;
    EXPECT_LT(delays.front(), audio_ms) << input;
    if (first.empty()) first = j.at("prediction").get<std::string>();
    EXPECT_EQ(j.at("prediction").get<std::string>(), first) << input;
  }
}

TEST_F(SpeechCli, TextEvalStillRuns) {
  write_text("pairs.tsv", "The cat sleeps.\tLe chat dort.\nOpen the door.\tOuvre la porte.\n");
  auto r = run("eval -m model --tsv pairs.tsv -k 2 --json -t 1");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("k").get<int>(), 2);
  EXPECT_TRUE(j.contains("BLEU"));
  EXPECT_EQ(run("eval -m model -k 2").code, 2);
}

}  // namespace
}  // namespace gpstream
