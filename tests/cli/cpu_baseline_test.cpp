// The binary's instruction-set check (src/cli/cpu_baseline.cpp), on CPUs emulated by qemu-user: an Intel
// Sandy Bridge has AVX but none of x86-64-v3's later additions, a Nehalem has no AVX at all; a Haswell has
// them all. Skipped without qemu-x86_64 (Debian's qemu-user).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "../testing/temp_dir.h"
#include "cli_run.h"

namespace gpstream {
namespace {

testing::CommandRun run_on(const std::string& cpu) {
  testing::TempDir tmp;
  testing::CommandRun r = testing::run_command(
      "qemu-x86_64 -cpu " + cpu + " " + testing::kGpstreamBin + " version >/dev/null", tmp.file("err"));
  // qemu's own notes on features its emulator lacks are not the binary's.
  std::string mine;
  for (size_t i = 0; i < r.err.size();) {
    const size_t j = std::min(r.err.find('\n', i), r.err.size());
    const std::string line = r.err.substr(i, j - i);
    if (line.rfind("qemu-x86_64:", 0) != 0) mine += line + "\n";
    i = j + 1;
  }
  r.err = mine;
  return r;
}

TEST(CpuBaseline, NamesTheMissingInstructionsAndExits1) {
  if (std::system("command -v qemu-x86_64 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "qemu-x86_64 (qemu-user) not installed";
  // By hand from Intel's feature lists: Sandy Bridge (2011) added AVX; F16C came with Ivy Bridge, and AVX2,
  // FMA, BMI1/2, LZCNT and MOVBE with Haswell. Nehalem has none of them.
  const std::string prefix = "gpstream: this CPU lacks instructions gpstream is built for (x86-64-v3):";
  testing::CommandRun sandy = run_on("SandyBridge");
  EXPECT_EQ(sandy.code, 1);
  EXPECT_EQ(sandy.err, prefix + " avx2 fma f16c bmi1 bmi2 lzcnt movbe\n");
  testing::CommandRun nehalem = run_on("Nehalem");
  EXPECT_EQ(nehalem.code, 1);
  EXPECT_EQ(nehalem.err, prefix + " avx avx2 fma f16c bmi1 bmi2 lzcnt movbe\n");
  testing::CommandRun haswell = run_on("Haswell");
  EXPECT_EQ(haswell.code, 0) << haswell.err;
  EXPECT_EQ(haswell.err, "");
}

}  // namespace
}  // namespace gpstream
