// `gpstream compare-curves` end to end over run folders written here by hand (instances.log as gpstream eval
// writes it): the full-set points and differences derived by hand in words and (paced, LAAL_CA) in ms, the
// JSON and text reports, and the errors: runs on other sentences, in other units, _CA without a clock (exit
// 1), and the usage errors (exit 2). Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace gpstream {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/compare_curves_cli_test_tmp/" + std::to_string(getpid());

const std::vector<std::string> kRefs = {"a b c d", "e f g h", "i j k l", "m n o p"};

std::string list(const std::vector<double>& xs, bool paced) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    std::ostringstream v;
    v << xs[i];
    s += (i ? ", " : "") + v.str() + (paced ? ".0" : "");
  }
  return s + "]";
}

// A run of the four sentences (4 source words each; references kRefs): sentence i's hypothesis is its
// reference when perfect[i], else "x x x x"; delays[i] its delays (words, or ms when paced, with elapsed =
// delays + extra_ms and source_length 1600.0 ms: 2.5 words/s).
void write_run(const std::string& name, const std::vector<bool>& perfect,
               const std::vector<std::vector<double>>& delays, bool paced = false, double extra_ms = 0,
               size_t sentences = 4, const std::string& last_reference = "m n o p") {
  fs::create_directories(kDir + "/" + name);
  std::ofstream out(kDir + "/" + name + "/instances.log");
  for (size_t i = 0; i < sentences; ++i) {
    const std::string ref = i == 3 ? last_reference : kRefs[i];
    std::vector<double> elapsed(delays[i].size(), 0.0);
    if (paced)
      for (size_t j = 0; j < elapsed.size(); ++j) elapsed[j] = delays[i][j] + extra_ms;
    out << "{\"index\": " << i << ", \"prediction\": \"" << (perfect[i] ? ref : "x x x x")
        << "\", \"delays\": " << list(delays[i], paced) << ", \"elapsed\": " << list(elapsed, paced)
        << ", \"prediction_length\": 4, \"reference\": \"" << ref << "\", \"source\": \"s t u v\", "
        << "\"source_length\": " << (paced ? "1600.0" : "4") << "}\n";
  }
}

// Wait-k delays over 4 source words: min(k + j − 1, 4). With |X| = |Y*| = 4 (γ = 1) a sentence's LAAL is
// (1/τ) Σ_{j≤τ} (d_j − (j − 1)) = k for k = 1..4 (e.g. k = 3: d = 3,4,4,4, τ = 2, (3 + 3)/2).
std::vector<std::vector<double>> wait_k(int k, double ms = 1) {
  std::vector<double> d;
  for (int j = 1; j <= 4; ++j) d.push_back(std::min(k + j - 1, 4) * ms);
  return std::vector<std::vector<double>>(4, d);
}

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, "compare-curves " + args + " < /dev/null");
}

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

class CompareCurvesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    fs::remove_all(kDir);
    fs::create_directories(kDir);
    // BLEU by hand: a perfect sentence has n-gram counts 4/4, 3/3, 2/2, 1/1, "x x x x" 0/4, 0/3, 0/2, 0/1,
    // so with P perfect sentences of 4 every precision is P/4 and BP = 1: BLEU = 25·P.
    // Baseline: (LAAL 1, BLEU 25), (3, 50), (4, 75). System: (2, 75), (4, 100).
    write_run("k1", {true, false, false, false}, wait_k(1));
    write_run("k3", {true, true, false, false}, wait_k(3));
    write_run("k4", {true, true, true, false}, wait_k(4));
    write_run("tau-a", {true, true, true, false}, wait_k(2));
    write_run("tau-b", {true, true, true, true}, wait_k(4));
  }
};

// at 2: baseline 25 + (1/2)·25 = 37.5, system 75, difference 37.5; at 3: 50 and 75 + (1/2)·25 = 87.5 →
// 37.5; at 4: 75 and 100 → 25; at 1.5: baseline 25 + (0.5/2)·25 = 31.25, below the system's range.
TEST_F(CompareCurvesCli, HandDerivedCurvesInWords) {
  const auto r = run("--baseline k1 k3 k4 --system tau-a tau-b --at 2,3,4 --at 1.5 -n 200 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["latency"], "LAAL");
  EXPECT_EQ(j["unit"], "source words");
  EXPECT_EQ(j["n_sentences"], 4);
  EXPECT_EQ(j["n_samples"], 200);
  EXPECT_EQ(j["seed"], 12345);
  ASSERT_EQ(j["baseline"].size(), 3u);
  EXPECT_EQ(j["baseline"][1]["run"], "k3");
  EXPECT_DOUBLE_EQ(j["baseline"][1]["LAAL"].get<double>(), 3.0);
  EXPECT_NEAR(j["baseline"][1]["BLEU"].get<double>(), 50.0, 1e-9);
  EXPECT_NEAR(j["system"][1]["BLEU"].get<double>(), 100.0, 1e-9);
  const std::vector<double> base = {37.5, 50, 75, 31.25}, sys = {75, 87.5, 100};
  for (size_t a = 0; a < 4; ++a) {
    SCOPED_TRACE(a);
    const json& d = j["at"][a];
    EXPECT_NEAR(d["baseline"].get<double>(), base[a], 1e-9);
    if (a == 3) {
      EXPECT_TRUE(d["system"].is_null());
      EXPECT_TRUE(d["diff"].is_null());
      EXPECT_TRUE(d["mean"].is_null());
      EXPECT_EQ(d["n_valid"], 0);
      EXPECT_EQ(d["n_system_out_of_range"], 200);
      EXPECT_FALSE(d["excludes_zero"].get<bool>());
      continue;
    }
    EXPECT_NEAR(d["system"].get<double>(), sys[a], 1e-9);
    EXPECT_NEAR(d["diff"].get<double>(), sys[a] - base[a], 1e-9);
    // Every sentence of a setting has the setting's LAAL, so every resample reaches 2, 3 and 4 on both.
    EXPECT_EQ(d["n_valid"], 200);
    EXPECT_EQ(d["n_out_of_range"], 0);
    EXPECT_LE(d["lower"].get<double>(), d["mean"].get<double>());
    EXPECT_LE(d["mean"].get<double>(), d["upper"].get<double>());
  }
  // The same seed gives the same report; the text form has one row per target.
  EXPECT_EQ(run("--baseline k1 k3 k4 --system tau-a tau-b --at 2,3,4 --at 1.5 -n 200 --json").out, r.out);
  const auto text = run("--baseline k1 k3 k4 --system tau-a tau-b --at 2,3,1.5 -n 200");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("excludes 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("LAAL in source words; paired bootstrap: 200 resamples of the 4 sentences"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    37.50   75.00  +37.50"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    50.00   87.50  +37.50"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("      1.5     31.25       -       -       -  -                 no          200 "
                          "(baseline 0, system 200)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("note: LAAL 1.5 is outside a curve's LAAL range on the full set"),
            std::string::npos)
      << text.out;
  // A folder's instances.log may be named directly.
  EXPECT_EQ(run("--baseline k1/instances.log k3 k4 --system tau-a tau-b --at 2 -n 10").code, 0);
}

// --quality WER on the same runs: "x x x x" against a four-word reference is four substitutions, a perfect
// sentence none, so with P perfect sentences of 4 the WER is 25·(4 − P) %: baseline (1, 75), (3, 50),
// (4, 25); system (2, 25), (4, 0). At 2: baseline 75 − (1/2)·25 = 62.5, system 25: −37.5; at 3: 50 and
// 25 − (1/2)·25 = 12.5: −37.5; at 4: 25 and 0: −25.
TEST_F(CompareCurvesCli, WerCurvesByHand) {
  const auto r = run("--baseline k1 k3 k4 --system tau-a tau-b --at 2,3,4 --quality WER -n 100 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["quality"], "WER");
  EXPECT_NEAR(j["baseline"][0]["WER"].get<double>(), 75.0, 1e-9);
  EXPECT_NEAR(j["system"][1]["WER"].get<double>(), 0.0, 1e-9);
  const std::vector<double> diff = {-37.5, -37.5, -25};
  for (size_t a = 0; a < diff.size(); ++a) EXPECT_NEAR(j["at"][a]["diff"].get<double>(), diff[a], 1e-9) << a;
  const auto text = run("--baseline k1 k3 k4 --system tau-a tau-b --at 2 --quality WER -n 10");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("WER difference system - baseline"), std::string::npos) << text.out;
  EXPECT_EQ(run("--baseline k1 --system tau-a --at 2 --quality TER").code, 2);
}

// Paced runs (2.5 words/s: 400 ms a word, |X| = 1600 ms), LAAL_CA over elapsed = delays + 100 ms (baseline)
// or + 200 ms (system). Baseline k1: elapsed 500, 900, 1300, 1700, τ = 4, terms 500 − 0·400, 900 − 400, … →
// 500; k3: 1300, 1700, 1700, 1700, τ = 2, (1300 + 1700 − 400)/2 = 1300. System k2: 1000, 1400, 1800, 1800,
// τ = 3 → 1000; k4: 1800 > 1600 at once → 1800. At 1200 ms: baseline 25 + (700/800)·25 = 46.875, system
// 75 + (200/800)·25 = 81.25; difference 34.375.
TEST_F(CompareCurvesCli, ComputationAwareOnPacedRuns) {
  write_run("p1", {true, false, false, false}, wait_k(1, 400), true, 100);
  write_run("p3", {true, true, false, false}, wait_k(3, 400), true, 100);
  write_run("q2", {true, true, true, false}, wait_k(2, 400), true, 200);
  write_run("q4", {true, true, true, true}, wait_k(4, 400), true, 200);
  const auto r = run("--baseline p1 p3 --system q2 q4 --at 1200 --latency LAAL_CA -n 50 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["unit"], "ms");
  EXPECT_DOUBLE_EQ(j["baseline"][0]["LAAL_CA"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["baseline"][1]["LAAL_CA"].get<double>(), 1300.0);
  EXPECT_DOUBLE_EQ(j["system"][0]["LAAL_CA"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["system"][1]["LAAL_CA"].get<double>(), 1800.0);
  EXPECT_NEAR(j["at"][0]["baseline"].get<double>(), 46.875, 1e-9);
  EXPECT_NEAR(j["at"][0]["system"].get<double>(), 81.25, 1e-9);
  EXPECT_NEAR(j["at"][0]["diff"].get<double>(), 34.375, 1e-9);
  // Plain LAAL on the same runs is in ms too: k1's delays 400, 800, 1200, 1600 → 400.
  const auto laal = run("--baseline p1 p3 --system q2 q4 --at 1000 -n 10 --json");
  ASSERT_EQ(laal.code, 0) << laal.err;
  EXPECT_DOUBLE_EQ(json::parse(laal.out)["baseline"][0]["LAAL"].get<double>(), 400.0);
  // Words and ms cannot share an axis.
  const auto mixed = run("--baseline k1 k3 --system q2 q4 --at 2");
  EXPECT_EQ(mixed.code, 1);
  EXPECT_EQ(count_lines(mixed.err), 1u) << mixed.err;
  EXPECT_NE(mixed.err.find("cannot share a latency axis"), std::string::npos) << mixed.err;
}

TEST_F(CompareCurvesCli, RunsOnOtherSentencesAndWithoutAClockAreErrors) {
  write_run("short", {true, true, true}, wait_k(2), false, 0, 3);
  write_run("other-ref", {true, true, true, true}, wait_k(2), false, 0, 4, "m n o q");
  for (const char* args :
       {"--baseline k1 k3 --system short --at 2", "--baseline k1 k3 --system other-ref --at 2"}) {
    SCOPED_TRACE(args);
    const auto r = run(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("not on the same sentences"), std::string::npos) << r.err;
  }
  const auto ca = run("--baseline k1 k3 --system tau-a --at 2 --latency LAAL_CA");
  EXPECT_EQ(ca.code, 1);
  EXPECT_EQ(count_lines(ca.err), 1u) << ca.err;
  EXPECT_NE(ca.err.find("needs runs with a clock"), std::string::npos) << ca.err;
  const auto missing = run("--baseline k1 no-such-run --system tau-a --at 2");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(count_lines(missing.err), 1u) << missing.err;
}

TEST_F(CompareCurvesCli, UsageErrors) {
  for (const char* args :
       {"", "--baseline k1 --system tau-a", "--baseline k1 --at 2", "--system tau-a --at 2",
        "--baseline k1 --system tau-a --at x", "--baseline k1 --system tau-a --at 2 --latency ATD",
        "--baseline k1 --system tau-a --at 2 -n 0", "--baseline k1 --system tau-a --at inf",
        "--baseline k1 --system tau-a --at 2 --sacrebleu-tokenizer zh",
        "--baseline k1 --system tau-a --at"}) {
    SCOPED_TRACE(args);
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  }
}

}  // namespace
}  // namespace gpstream
