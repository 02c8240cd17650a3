// `gpstream plot` end to end over eval folders built here by hand (scores.tsv and instances.log as gpstream
// eval writes them): the x axis unit from the instance format (words for text, ms for paced text and speech),
// legend entries "<label or folder>, <paradigm>" without repeating a folder named after its paradigm, k
// labels, --x-unit for folders kept without their instances.log, and the usage errors. Skipped when the
// gpstream binary is not built (GPSTREAM_TESTS_ONLY builds).
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

// eval's policy folders: one curve per policy, its points labelled with the policy's setting.
TEST_F(PlotCli, PolicyRunsAreCurvesOfTheirOwnLabelledWithTheirSetting) {
  write_run("runs", "group-k1", 2.02, 22.65, Kind::Text);
  write_run("runs", "group-k3", 3.68, 39.08, Kind::Text);
  write_run("runs", "group-confidence-tau0.2", 3.32, 35.73, Kind::Text);
  write_run("runs", "group-local-agreement-lag1-8", 2.60, 36.38, Kind::Text);
  write_run("runs", "group-local-agreement-lag3-8", 3.90, 40.35, Kind::Text);
  write_run("runs", "group-alignatt-f1", 2.90, 37.10, Kind::Text);
  write_run("runs", "group-alignatt-f12", 5.10, 41.20, Kind::Text);
  auto r = plot("runs -o q.svg");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "q.svg: 4 curves\n");
  const std::string svg = read("q.svg");
  EXPECT_EQ(
      svg_strings(svg_texts(svg, "legend")),
      (std::vector<std::string>{"group", "group-alignatt", "group-confidence", "group-local-agreement"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "point-label")),
            (std::vector<std::string>{"k=1", "k=3", "f=1", "f=12", "tau=0.2", "lag=1-8", "lag=3-8"}));
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

// DIR/RUN/scores.tsv alone, as results/ keeps them: LAAL in source words and LAAL_CA in ms, the units
// docs/results.md gives them, and no instances.log.
void write_scores_only(const std::string& dir, const std::string& run, const std::string& row) {
  const std::string path = kDir + "/" + dir + "/" + run;
  fs::create_directories(path);
  std::ofstream(path + "/scores.tsv") << "BLEU\tchrF\tLAAL\tLAAL_CA\tAL\tAL_CA\n" << row << "\n";
}

TEST_F(PlotCli, XUnitStatesTheUnitOfRunsKeptWithoutInstancesLog) {
  write_scores_only("kept/group", "group-k1", "21.71\t54.38\t1.88\t755\t1.39\t557");
  write_scores_only("kept/group", "group-k3", "37.45\t62.46\t3.63\t1455\t3.35\t1344");
  write_scores_only("kept/group", "offline", "40.63\t64.42\t13.16\t5272\t13.16\t5272");
  write_scores_only("kept/interleaved", "interleaved-k1", "22.53\t50.99\t1.84\t739\t1.37\t553");
  auto words = plot("kept/group kept/interleaved --x-unit words -o w.svg --title 'en-fr: BLEU vs LAAL'");
  ASSERT_EQ(words.code, 0) << words.err;
  EXPECT_EQ(words.err, "");  // the unit is stated: nothing to warn about
  const std::string w = read("w.svg");
  EXPECT_EQ(svg_strings(svg_texts(w, "axis-title")),
            (std::vector<std::string>{"LAAL (source words)", "BLEU"}));
  EXPECT_EQ(svg_strings(svg_texts(w, "title")), std::vector<std::string>{"en-fr: BLEU vs LAAL"});
  EXPECT_EQ(svg_strings(svg_texts(w, "legend")),
            (std::vector<std::string>{"group", "group, offline", "interleaved"}));
  // The x ticks (written before the y ones) span the curves' 1.84 … 3.63 words, widened by 3 % to
  // 1.7863 … 3.6837: steps of 0.1 and 0.2 need more than 10 intervals, 0.25 needs 8 (7 × 0.25 to 15 × 0.25).
  const auto ticks = svg_strings(svg_texts(w, "tick"));
  ASSERT_GE(ticks.size(), 9u);
  EXPECT_EQ(
      std::vector<std::string>(ticks.begin(), ticks.begin() + 9),
      (std::vector<std::string>{"1.75", "2.00", "2.25", "2.50", "2.75", "3.00", "3.25", "3.50", "3.75"}));
  auto ms = plot("kept/group kept/interleaved --x LAAL_CA --x-unit ms -o m.svg");
  ASSERT_EQ(ms.code, 0) << ms.err;
  EXPECT_EQ(svg_strings(svg_texts(read("m.svg"), "axis-title")),
            (std::vector<std::string>{"LAAL_CA (ms)", "BLEU"}));
  // Without --x-unit the unit stays unknown, with a warning that names the option.
  auto none = plot("kept/group -o n.svg");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.err.find("warning: "), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("has no instances.log: the latency unit is unknown (state it with --x-unit"),
            std::string::npos)
      << none.err;
  EXPECT_EQ(svg_strings(svg_texts(read("n.svg"), "axis-title"))[0], "LAAL");
  // Only the two units.
  auto bad = plot("kept/group --x-unit s -o b.svg");
  EXPECT_EQ(bad.code, 2);
  EXPECT_FALSE(fs::exists(kDir + "/b.svg"));
}

TEST_F(PlotCli, XUnitMustAgreeWithTheInstancesLog) {
  write_run("eval", "group-k1", 1.9, 21.7, Kind::Text);
  write_run("paced", "group-k1", 760, 21.7, Kind::Paced);
  // Agreeing: the same title as without the option.
  auto agree = plot("eval --x-unit words -o a.svg");
  ASSERT_EQ(agree.code, 0) << agree.err;
  EXPECT_EQ(svg_strings(svg_texts(read("a.svg"), "axis-title"))[0], "LAAL (source words)");
  // Contradicting: text delays count words, not ms; paced ones are ms.
  auto text_ms = plot("eval --x-unit ms -o c.svg");
  EXPECT_EQ(text_ms.code, 2);
  EXPECT_NE(text_ms.err.find("--x-unit ms, but the runs' instances.log imply source words"),
            std::string::npos)
      << text_ms.err;
  auto paced_words = plot("paced --x-unit words -o d.svg");
  EXPECT_EQ(paced_words.code, 2);
  EXPECT_NE(paced_words.err.find("--x-unit words, but the runs' instances.log imply ms"), std::string::npos)
      << paced_words.err;
  EXPECT_FALSE(fs::exists(kDir + "/c.svg"));
  EXPECT_FALSE(fs::exists(kDir + "/d.svg"));
}

}  // namespace
}  // namespace gpstream
