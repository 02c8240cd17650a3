// End-to-end checks of `gpstream translate` (and eval) on the shipped en-fr model: every word of every line
// read; with greedy decoding and with the word beam search, one JSON line per input sentence whose delays
// follow wait-k by hand (word j is written after min(k + j − 1, M) of the M source words: the beam changes
// the words, never when they are written); bad usage of --beam exits 2 with one line that says why; the
// kernels' instruction set (GPSTREAM_ISA) changes no word and no delay, and `version` reports it. Skipped
// when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"

namespace gpstream {
namespace {

using nlohmann::json;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/translate_cli_test_tmp/" + std::to_string(getpid());
const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args);
}

size_t count_words(const std::string& s) {
  std::istringstream in(s);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

class TranslateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
    std::ofstream(kDir + "/in.txt") << "Open the file.\n"
                                       "Save the document in a new folder before you close the window.\n"
                                       "Click OK.\n";
  }
};

TEST_F(TranslateCli, DelaysFollowWaitKWithAndWithoutTheBeam) {
  const std::vector<size_t> source_words = {3, 12, 2};
  for (const char* beam : {"1", "4"}) {
    for (int k : {2, 5}) {
      auto r = run("translate -m " + kModel + " -k " + std::to_string(k) + " --beam " + beam +
                   " --delays < in.txt");
      ASSERT_EQ(r.code, 0) << r.err;
      std::istringstream lines(r.out);
      size_t i = 0;
      for (std::string line; std::getline(lines, line); ++i) {
        ASSERT_LT(i, source_words.size()) << r.out;
        const json j = json::parse(line);
        const auto delays = j.at("delays").get<std::vector<int>>();
        ASSERT_EQ(delays.size(), count_words(j.at("prediction").get<std::string>())) << line;
        ASSERT_FALSE(delays.empty()) << line;
        for (size_t w = 0; w < delays.size(); ++w)
          EXPECT_EQ(delays[w], std::min<int>(k + static_cast<int>(w), static_cast<int>(source_words[i])))
              << "beam " << beam << " k " << k << ": " << line;
      }
      EXPECT_EQ(i, source_words.size()) << r.out;
    }
  }
}

// GPSTREAM_ISA for the commands run while it lives.
class ScopedIsa {
 public:
  explicit ScopedIsa(const char* isa) { setenv("GPSTREAM_ISA", isa, 1); }
  ~ScopedIsa() { unsetenv("GPSTREAM_ISA"); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;
};

TEST_F(TranslateCli, VersionReportsTheKernelsInstructionSet) {
  {
    ScopedIsa isa("avx2");
    auto r = run("version");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("kernels: avx2"), std::string::npos) << r.out;
  }
  ScopedIsa isa("avx1024");
  auto r = run("version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("GPSTREAM_ISA=avx1024 is not one of auto, avx2, avx512"), std::string::npos) << r.err;
}

// The AVX-512 twin of the BF16 panel kernel sums in the AVX2 kernel's order: the shipped (BF16) model writes
// the same words with the same delays under either, greedy and with the beam.
TEST_F(TranslateCli, SameWordsAndDelaysWithEitherKernel) {
  if (run("version").out.find("CPU has AVX-512F") == std::string::npos) GTEST_SKIP() << "no AVX-512F here";
  for (const char* beam : {"1", "4"}) {
    std::vector<std::string> outputs;
    for (const char* name : {"avx2", "avx512"}) {
      ScopedIsa isa(name);
      auto r = run("translate -m " + kModel + " -k 3 --beam " + beam + " --delays < in.txt");
      ASSERT_EQ(r.code, 0) << r.err;
      std::string words_and_delays;
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        const json j = json::parse(line);
        words_and_delays += j.at("prediction").dump() + " " + j.at("delays").dump() + "\n";
      }
      outputs.push_back(words_and_delays);
    }
    ASSERT_FALSE(outputs[0].empty());
    EXPECT_EQ(outputs[0], outputs[1]) << "beam " << beam;
  }
}

// No word is dropped: a line of several sentences, of fifty, and a long line with no sentence end at all are
// read whole. Expected independently of the multi-sentence code path: each sentence (or 64-word piece of the
// unpunctuated line: docs/streaming.md, "Continuous streams"; with --sentence-ends punctuation, so that only
// the word limit cuts it) translated as a line of its own — a segment of a continuous stream starts from the
// prompt like a fresh session — and its delays shifted by the words before it.
TEST_F(TranslateCli, EveryWordOfEveryLineIsRead) {
  struct Piece {
    std::string text;
    json alone;
  };
  const std::vector<std::string> sentences = {"Click the button to save the document.",
                                              "The file is saved in your home folder.", "Open the file."};
  std::string unpunctuated;
  for (int i = 0; i < 128; ++i) unpunctuated.append(i ? " " : "").append(i % 3 ? "file" : "folder");
  const std::vector<std::string> halves = {unpunctuated.substr(0, unpunctuated.size() / 2),
                                           unpunctuated.substr(unpunctuated.size() / 2 + 1)};
  ASSERT_EQ(count_words(halves[0]), 64u);
  // The lines: each piece alone, then the combined lines.
  std::vector<std::vector<std::string>> combined = {{sentences[0], sentences[1]}, {}, {halves[0], halves[1]}};
  for (int i = 0; i < 50; ++i) combined[1].push_back(sentences[i % 3]);
  std::ofstream in(kDir + "/long.txt");
  for (const auto& p : sentences) in << p << "\n";
  for (const auto& p : halves) in << p << "\n";
  for (const auto& line : combined) {
    for (size_t i = 0; i < line.size(); ++i) in << (i ? " " : "") << line[i];
    in << "\n";
  }
  in.close();
  auto r = run("translate -m " + kModel + " -k 3 --delays --sentence-ends punctuation < long.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<json> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
  ASSERT_EQ(out.size(), sentences.size() + halves.size() + combined.size());
  std::map<std::string, json> alone;
  for (size_t i = 0; i < sentences.size(); ++i) alone[sentences[i]] = out[i];
  for (size_t i = 0; i < halves.size(); ++i) alone[halves[i]] = out[sentences.size() + i];
  for (size_t c = 0; c < combined.size(); ++c) {
    const json& got = out[sentences.size() + halves.size() + c];
    std::string prediction;
    std::vector<int> delays;
    int words_before = 0;
    for (const auto& piece : combined[c]) {
      const json& a = alone.at(piece);
      const std::string p = a.at("prediction");
      prediction += (prediction.empty() || p.empty() ? "" : " ") + p;
      for (int d : a.at("delays").get<std::vector<int>>()) delays.push_back(words_before + d);
      words_before += static_cast<int>(count_words(piece));
    }
    EXPECT_EQ(got.at("prediction"), prediction) << "line " << c;
    EXPECT_EQ(got.at("delays").get<std::vector<int>>(), delays) << "line " << c;
    EXPECT_EQ(got.at("source_length"), words_before) << "line " << c;
    EXPECT_EQ(got.at("source_words_read"), words_before) << "line " << c;
  }
}

// eval reads every word of a line too: its instances for a line of two sentences and of fifty equal the
// sentences' own instances joined, delays shifted by the words before (as translate's above).
TEST_F(TranslateCli, EvalReadsEveryWordOfEveryLine) {
  const std::vector<std::string> sentences = {"Click the button to save the document.",
                                              "The file is saved in your home folder."};
  std::string fifty;
  for (int i = 0; i < 50; ++i) fifty.append(i ? " " : "").append(sentences[i % 2]);
  std::ofstream(kDir + "/lines.tsv") << sentences[0] << "\tr\n"
                                     << sentences[1] << "\tr\n"
                                     << sentences[0] << " " << sentences[1] << "\tr\n"
                                     << fifty << "\tr\n";
  auto r = run("eval -m " + kModel + " --tsv lines.tsv -k 3 --output eval-out");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream log(kDir + "/eval-out/group-k3/instances.log");
  std::vector<json> inst;
  for (std::string line; std::getline(log, line);) inst.push_back(json::parse(line));
  ASSERT_EQ(inst.size(), 4u);
  for (size_t c : {2u, 3u}) {
    const size_t pieces = c == 2 ? 2 : 50;
    std::string prediction;
    std::vector<double> delays;
    double words_before = 0;
    for (size_t p = 0; p < pieces; ++p) {
      const json& a = inst[p % 2];
      const std::string text = a.at("prediction");
      prediction += (prediction.empty() || text.empty() ? "" : " ") + text;
      for (double d : a.at("delays").get<std::vector<double>>()) delays.push_back(words_before + d);
      words_before += a.at("source_length").get<double>();
    }
    EXPECT_EQ(inst[c].at("prediction"), prediction) << c;
    EXPECT_EQ(inst[c].at("delays").get<std::vector<double>>(), delays) << c;
    EXPECT_EQ(inst[c].at("source_length").get<double>(), words_before) << c;
  }
}

TEST_F(TranslateCli, BeamUsageErrors) {
  auto sampled = run("translate -m " + kModel + " --beam 2 --temperature 0.5 < in.txt");
  EXPECT_EQ(sampled.code, 2);
  EXPECT_NE(sampled.err.find("needs greedy decoding"), std::string::npos) << sampled.err;
  EXPECT_EQ(run("translate -m " + kModel + " --beam 2 --repetition-penalty 1.3 < in.txt").code, 2);
  EXPECT_EQ(run("translate -m " + kModel + " --beam 0 < in.txt").code, 2);
  EXPECT_EQ(run("translate -m " + kModel + " --beam 1 --temperature 0.5 --seed 3 < in.txt").code, 0);
}

// --policy and its settings: unknown names, out-of-range values and mixed-up options exit 2 (translate and
// eval); the confidence and alignatt policies with min-lag = max-lag = k write what wait-k writes, when it
// writes it; eval sweeps alignatt's --frames, one JSON record each.
TEST_F(TranslateCli, PolicyOptions) {
  std::ofstream(kDir + "/in.tsv") << "Open the file.\tOuvrez le fichier.\n";
  for (const char* cmd : {"translate -m ", "eval --tsv in.tsv -m "}) {
    const std::string base = cmd + kModel;
    for (const char* bad :
         {" --policy nope", " --tau 2", " --policy confidence --tau 2", " --policy confidence --tau -0.5",
          " --policy confidence -k 3", " --tau 0.5", " --policy wait-k --min-lag 2",
          " --policy confidence --min-lag 5 --max-lag 3", " --policy confidence --max-lag 0",
          " --policy confidence --paradigm reencode", " --frames 2", " --policy alignatt --frames 0",
          " --policy alignatt --layers 6", " --policy alignatt --layers 1,1", " --policy alignatt --tau 0.5",
          " --policy confidence --frames 2", " --policy alignatt -k 3",
          " --policy alignatt --paradigm interleaved"}) {
      auto r = run(base + bad + " < in.txt");
      EXPECT_EQ(r.code, 2) << cmd << bad << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << cmd << bad << ": " << r.err;
    }
  }
  auto wait3 = run("translate -m " + kModel + " -k 3 --delays < in.txt");
  ASSERT_EQ(wait3.code, 0) << wait3.err;
  for (const char* policy : {"--policy confidence", "--policy alignatt --frames 2 --layers 0,5"}) {
    auto fixed3 = run("translate -m " + kModel + " " + policy + " --min-lag 3 --max-lag 3 --delays < in.txt");
    ASSERT_EQ(fixed3.code, 0) << policy << ": " << fixed3.err;
    std::istringstream a(wait3.out), b(fixed3.out);
    std::string la, lb;
    size_t n = 0;
    while (std::getline(a, la) && std::getline(b, lb)) {
      const json ja = json::parse(la), jb = json::parse(lb);
      EXPECT_EQ(ja.at("prediction"), jb.at("prediction")) << policy;
      EXPECT_EQ(ja.at("delays"), jb.at("delays")) << policy;
      ++n;
    }
    EXPECT_EQ(n, 3u) << policy;
  }
  auto sweep = run("eval --tsv in.tsv -m " + kModel + " --policy alignatt --frames 1,3 --json --output ev");
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  std::istringstream lines(sweep.out);
  std::vector<int> frames;
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    EXPECT_EQ(j.at("policy"), "alignatt");
    frames.push_back(j.at("frames").get<int>());
  }
  EXPECT_EQ(frames, (std::vector<int>{1, 3}));
  for (const char* dir : {"/ev/group-alignatt-f1/scores.tsv", "/ev/group-alignatt-f3/scores.tsv"})
    EXPECT_TRUE(std::filesystem::exists(kDir + dir)) << dir;
}

}  // namespace
}  // namespace gpstream
