// `gpstream attention` on the shipped en-fr model: the map's rows are probability distributions over the rows
// each row sees (gpe.md §4), with nothing on the rows it does not see — under group position encoding a
// source row never sees a target row, in the interleaved layout source rows see the target rows written
// before them; the SVG and the JSON name the tokens; re-encoding paradigms and a layer past the model's are
// refused. (The probabilities themselves are checked against a double-precision reference in
// TrainModel.AttentionProbabilitiesEqualTheReference.) Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"

namespace gpstream {
namespace {

using nlohmann::json;

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/attention_cli_test_tmp/" + std::to_string(getpid());
const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args);
}

std::string read(const std::string& path) {
  std::ifstream in(kDir + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class AttentionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
  }
};

// Every visible row sums to 1: the JSON rounds each weight to 6 decimals (n · 0.5e-6) and the mean over heads
// and layers of float softmax rows adds a few n·u (u = 2^-24): 1e-6 per row entry covers both.
void expect_distributions(const json& map) {
  const auto& w = map["weights"];
  ASSERT_EQ(w.size(), map["rows"].size());
  for (size_t i = 0; i < w.size(); ++i) {
    double sum = 0;
    for (const auto& v : w[i])
      if (!v.is_null()) sum += v.get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-6 * static_cast<double>(w.size())) << "row " << i;
  }
}

// Whether some source row sees some target row.
bool source_sees_target(const json& map) {
  const auto& rows = map["rows"];
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i]["group"] != "source") continue;
    for (size_t j = 0; j < rows.size(); ++j)
      if (rows[j]["group"] == "target" && !map["weights"][i][j].is_null()) return true;
  }
  return false;
}

TEST_F(AttentionCli, GroupAndInterleavedMaps) {
  auto g = run("attention -m " + kModel +
               " --paradigm group -k 2 \"Open the file.\" -o group.svg --json group.json --all-rows");
  ASSERT_EQ(g.code, 0) << g.err;
  const json gm = json::parse(read("group.json"));
  expect_distributions(gm);
  EXPECT_FALSE(source_sees_target(gm));
  EXPECT_TRUE(gm["layer"].is_null());
  bool has_file = false;
  for (const auto& r : gm["rows"]) has_file = has_file || r["text"] == "file";
  EXPECT_TRUE(has_file) << gm["rows"].dump();
  const std::string svg = read("group.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">file<"), std::string::npos);
  EXPECT_NE(svg.find("group, k = 2"), std::string::npos);

  auto i =
      run("attention -m " + kModel +
          " --paradigm interleaved -k 2 --layer 0 \"Open the file.\" -o inter.svg " + "--json inter.json");
  ASSERT_EQ(i.code, 0) << i.err;
  const json im = json::parse(read("inter.json"));
  expect_distributions(im);
  EXPECT_TRUE(source_sees_target(im));
  EXPECT_EQ(im["layer"], 0);
}

TEST_F(AttentionCli, RefusesWhatItCannotDraw) {
  EXPECT_EQ(run("attention -m " + kModel + " --paradigm reencode \"Open the file.\"").code, 2);
  auto r = run("attention -m " + kModel + " --layer 999 \"Open the file.\" -o x.svg");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("layer 999"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpstream
