// End-to-end checks of `gpstream average-checkpoints`: the written checkpoint, its message, exit codes.
// Skipped when the gpstream binary is not built (GPSTREAM_TESTS_ONLY builds).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_run.h"
#include "train/checkpoint.h"

namespace {

const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/train_cli_test_tmp/" + std::to_string(getpid());

gpstream::testing::CommandRun run(const std::string& args) {
  return gpstream::testing::run_gpstream(kDir, args);
}

void write(const std::string& name, int64_t step, std::vector<float> values,
           const std::string& fingerprint = "net") {
  gpstream::train::CheckpointState s;
  s.step = step;
  s.fingerprint = fingerprint;
  s.m.assign(values.size(), static_cast<float>(step));
  s.v.assign(values.size(), 1.0f);
  s.values = std::move(values);
  ASSERT_TRUE(gpstream::train::write_checkpoint(kDir + "/" + name, s).ok());
}

TEST(TrainCli, AverageCheckpointsWritesTheMean) {
  if (!std::filesystem::exists(gpstream::testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
  std::filesystem::create_directories(kDir);
  write("a.bin", 100, {1.0f, 10.0f, -3.0f});
  write("b.bin", 200, {2.0f, 20.0f, 5.0f});
  write("c.bin", 300, {1.0f, 2.0f, 3.0f}, "another");
  auto r = run("average-checkpoints -o avg.bin b.bin a.bin");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "avg.bin: the mean of 2 checkpoints, 3 parameters; optimizer state and step (200) of the newest\n");
  auto avg = gpstream::train::read_checkpoint(kDir + "/avg.bin");
  ASSERT_TRUE(avg.ok()) << avg.error().message();
  EXPECT_EQ(avg->values, (std::vector<float>{1.5f, 15.0f, 1.0f}));
  EXPECT_EQ(avg->step, 200);
  EXPECT_EQ(avg->m, std::vector<float>(3, 200.0f));
  // Another run's checkpoint, a missing file, no output: errors.
  auto other = run("average-checkpoints -o x.bin a.bin c.bin");
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("c.bin holds other parameters"), std::string::npos) << other.err;
  EXPECT_FALSE(std::filesystem::exists(kDir + "/x.bin"));
  EXPECT_EQ(run("average-checkpoints -o x.bin a.bin none.bin").code, 1);
  EXPECT_EQ(run("average-checkpoints a.bin").code, 2);
}

}  // namespace
