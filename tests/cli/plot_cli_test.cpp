// `gpstream plot` end to end over eval folders built here by hand (scores.tsv and instances.log as gpstream
// eval writes them): the x axis unit from the instance format (words for text, ms for paced text and speech),
// legend entries "<label or folder>, <paradigm>" without repeating a folder named after its paradigm, k
// labels, and the usage errors. Skipped when the gpstream binary is not built (GPSTREAM_TESTS_ONLY builds).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../testing/svg_elements.h"
#include "cli_run.h"

namespace gpstream {
namespace {

namespace fs = std::filesystem;
using testing::svg_strings;
using testing::svg_texts;

// One folder per process: ctest runs these tests in parallel processes.
const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/plot_cli_test_tmp/" + std::to_string(getpid());

enum class Kind { Text, Paced, Speech };

// DIR/RUN/scores.tsv with LAAL and BLEU (and WER), and a one-line instances.log of the given kind.
void write_run(const std::string& dir, const std::string& run, double laal, double quality, Kind kind) {
  const std::string path = kDir + "/" + dir + "/" + run;
  fs::create_directories(path);
  std::ofstream(path + "/scores.tsv") << "BLEU\tWER\tLAAL\tAP\n"
                                      << quality << "\t" << quality << "\t" << laal << "\t0.6\n";
  std::string line;
  if (kind == Kind::Text)
    line =
        R"({"index": 0, "prediction": "a b", "delays": [1, 2], "elapsed": [0, 0], "prediction_length": 2, )"
        R"("reference": "a b", "source": "x y", "source_length": 2})";
  if (kind == Kind::Paced)
    line = R"({"index": 0, "prediction": "a b", "delays": [400.0, 800.0], "elapsed": [410.5, 805.0], )"
           R"("prediction_length": 2, "reference": "a b", "source": "x y", "source_length": 800.0})";
  if (kind == Kind::Speech)
    line = R"({"index": 0, "prediction": "a b", "delays": [640.0, 1280.0], "elapsed": [650.0, 1290.0], )"
           R"("prediction_length": 2, "reference": "a b", "source": "utt0.wav", "source_length": 1312.5})";
  std::ofstream(path + "/instances.log") << line << "\n";
}

std::string read(const std::string& name) {
  std::ifstream in(kDir + "/" + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class PlotCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    fs::remove_all(kDir);
    fs::create_directories(kDir);
  }
  testing::CommandRun plot(const std::string& args) { return testing::run_gpstream(kDir, "plot " + args); }
};

TEST_F(PlotCli, FoldersNamedAfterTheirParadigmAreNotRepeated) {
  // scripts/reproduce-paper's plot: eval/group and eval/interleaved, paced (ms).
  write_run("eval/group", "group-k1", 755, 21.71, Kind::Paced);
  write_run("eval/group", "group-k3", 1455, 37.45, Kind::Paced);
  write_run("eval/group", "offline", 5272, 40.63, Kind::Paced);
  write_run("eval/interleaved", "interleaved-k1", 739, 22.53, Kind::Paced);
  write_run("eval/interleaved", "interleaved-k3", 1453, 35.64, Kind::Paced);
  auto r = plot("eval/group eval/interleaved/ -o q.svg");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "q.svg: 3 curves\n");
  const std::string svg = read("q.svg");
  EXPECT_EQ(svg_strings(svg_texts(svg, "axis-title")), (std::vector<std::string>{"LAAL (ms)", "BLEU"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "legend")),
            (std::vector<std::string>{"group", "group, offline", "interleaved"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "point-label")),
            (std::vector<std::string>{"k=1", "k=3", "k=1", "k=3"}));
}

TEST_F(PlotCli, LabelsNameTheCurvesOfTextRunsInWords) {
  write_run("m1", "group-k1", 1.88, 21.7, Kind::Text);
  write_run("m1", "group-k3", 3.63, 37.5, Kind::Text);
  write_run("m2", "group-k1", 1.84, 22.5, Kind::Text);
  write_run("m2", "group-k3", 3.63, 35.6, Kind::Text);
  auto r = plot("m1 m2 --label 'GPE model' --label baseline -o q.svg --title 'en-fr'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read("q.svg");
  EXPECT_EQ(svg_strings(svg_texts(svg, "axis-title")),
            (std::vector<std::string>{"LAAL (source words)", "BLEU"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "legend")),
            (std::vector<std::string>{"GPE model, group", "baseline, group"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "title")), std::vector<std::string>{"en-fr"});
  // Without labels the folder names stand in; one folder alone needs no name.
  ASSERT_EQ(plot("m1 m2 -o q2.svg").code, 0);
  EXPECT_EQ(svg_strings(svg_texts(read("q2.svg"), "legend")),
            (std::vector<std::string>{"m1, group", "m2, group"}));
  ASSERT_EQ(plot("m1 -o q3.svg").code, 0);
  EXPECT_EQ(svg_strings(svg_texts(read("q3.svg"), "legend")), std::vector<std::string>{"group"});
  // A ratio has no unit.
  ASSERT_EQ(plot("m1 --x AP -o q4.svg").code, 0);
  EXPECT_EQ(svg_strings(svg_texts(read("q4.svg"), "axis-title"))[0], "AP");
}

TEST_F(PlotCli, SpeechRunsPlotInMsWithTheirPhi) {
  write_run("speech", "group-k3-phi0", 1500, 20.3, Kind::Speech);
  write_run("speech", "group-k7-phi0", 2600, 13.4, Kind::Speech);
  write_run("speech", "offline-phi0", 4100, 11.0, Kind::Speech);
  auto r = plot("speech --y WER -o s.svg");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read("s.svg");
  EXPECT_EQ(svg_strings(svg_texts(svg, "axis-title")), (std::vector<std::string>{"LAAL (ms)", "WER"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "legend")), (std::vector<std::string>{"group φ=0", "offline φ=0"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "point-label")), (std::vector<std::string>{"k=3", "k=7"}));
}

TEST_F(PlotCli, RefusesWhatItCannotDrawTruthfully) {
  write_run("a/eval", "group-k1", 1.9, 21.7, Kind::Text);
  write_run("b/eval", "group-k1", 760, 21.7, Kind::Paced);
  // Words and ms on one axis.
  auto mixed = plot("a/eval b/eval --label a --label b");
  EXPECT_EQ(mixed.code, 1);
  EXPECT_NE(mixed.err.find("mix source words"), std::string::npos) << mixed.err;
  // Two curves that the legend could not tell apart.
  write_run("c/eval", "group-k1", 1.8, 22.0, Kind::Text);
  auto same = plot("a/eval c/eval");
  EXPECT_EQ(same.code, 2);
  EXPECT_NE(same.err.find("both called 'eval, group'"), std::string::npos) << same.err;
  // One --label per folder.
  auto labels = plot("a/eval c/eval --label only-one");
  EXPECT_EQ(labels.code, 2);
  EXPECT_NE(labels.err.find("1 --label for 2 folders"), std::string::npos) << labels.err;
  // No instances.log: the unit is unknown and said so, not guessed.
  fs::remove(kDir + "/a/eval/group-k1/instances.log");
  auto unknown = plot("a/eval -o u.svg");
  ASSERT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_NE(unknown.err.find("latency unit is unknown"), std::string::npos);
  EXPECT_EQ(svg_strings(svg_texts(read("u.svg"), "axis-title"))[0], "LAAL");
}

}  // namespace
}  // namespace gpstream
