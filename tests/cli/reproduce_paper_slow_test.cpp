// scripts/reproduce-paper end to end at toy scale: two seeds of two rows fine-tuned for two steps from the
// committed checkpoint and evaluated on six dev pairs, their outputs stored, the chunks skipped when stored,
// and the report written from the stored outputs alone (seed means ± sd, seed-bootstrap intervals, compute).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.h"

namespace gpstream::testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReproducePaper, StoresChunksAndReportsFromThem) {
  const std::string src = GPSTREAM_SOURCE_DIR;
  if (!std::filesystem::exists(src + "/data/checkpoints/pretrained-en-fr/config.json"))
    GTEST_SKIP() << "no committed en-fr checkpoint";
  if (std::system("command -v jq >/dev/null") != 0) GTEST_SKIP() << "needs jq";
  const std::string tmp = ::testing::TempDir() + "reproduce-paper-" + std::to_string(::getpid());
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  const std::string script = "GPS=" + kGpstreamBin + " FT_TOKENS=8000 " + src +
                             "/scripts/reproduce-paper --rows group,phi0.5 --seeds 1,2 --limit 6 --run " +
                             tmp + "/run --results " + tmp + "/results --out " + tmp + "/report/results.md";
  std::filesystem::create_directories(tmp + "/report");
  auto first = run_command(script, tmp + "/stderr.txt");
  ASSERT_EQ(first.code, 0) << first.err;
  for (const char* seed : {"1", "2"}) {
    const std::string d = tmp + "/results/phi0.5/seed" + seed;
    for (const char* f : {"/training.json", "/finetune.json", "/group-k1/scores.json", "/group-k7/scores.tsv",
                          "/group-k7/config.yaml", "/group-k1/instances.log.gz"})
      EXPECT_TRUE(std::filesystem::exists(d + f)) << d + f;
    EXPECT_NE(read_all(d + "/finetune.json").find("\"seed\": " + std::string(seed)), std::string::npos);
    EXPECT_NE(read_all(d + "/finetune.json").find("\"phi\": 0.5"), std::string::npos);
  }
  auto lines = run_command("zcat " + tmp + "/results/phi0.5/seed1/group-k1/instances.log.gz | wc -l",
                           tmp + "/stderr.txt");
  EXPECT_EQ(lines.out, "6\n");

  auto status = run_command(script + " --status", tmp + "/stderr.txt");
  EXPECT_NE(status.out.find("phi0.5                 seed 2  stored"), std::string::npos) << status.out;
  auto again = run_command(script, tmp + "/stderr.txt");  // every chunk stored: nothing trains
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("fine-tune"), std::string::npos) << again.err;

  auto report = run_command(script + " --report-only", tmp + "/stderr.txt");
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = read_all(tmp + "/report/results.md");
  EXPECT_NE(md.find("| phi0.5 | 1,2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.5 | "), std::string::npos) << md;
  // φ = 0.5 against the group row, both at two seeds: a seed-bootstrap interval.
  const auto phi_row = md.find("| 0.5 | ");
  ASSERT_NE(phi_row, std::string::npos);
  const std::string phi_line = md.substr(phi_row, md.find('\n', phi_row) - phi_row);
  EXPECT_NE(phi_line.find(" ["), std::string::npos) << phi_line;
  EXPECT_NE(md.find(" ± "), std::string::npos) << md;
  EXPECT_NE(md.find("| phi0.5 | 2 | "), std::string::npos) << md;  // the compute table's second seed
  EXPECT_EQ(run_command(script + " --rows nonesuch", tmp + "/stderr.txt").code, 2);
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace gpstream::testing
