// `gpstream serve`'s admission options: a non-loopback --host needs --api-key-file or --insecure (exit 2
// saying which to add, before the model is loaded), a bad key file is a usage error naming the file and
// line, a FIFO is refused without blocking, and --max-sessions-per-client may not exceed --max-sessions.
// Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_run.h"

namespace gpstream {
namespace {

const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/serve_cli_test_tmp/" + std::to_string(getpid());
const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
  }
  void TearDown() override { std::filesystem::remove_all(kDir); }

  static testing::CommandRun serve(const std::string& args) {
    return testing::run_gpstream(kDir, "serve -m " + kModel + " --port 0 " + args);
  }
  // Runs a server that starts, stopped by SIGINT after `seconds`; its stdout is the port it listens on.
  static testing::CommandRun serve_briefly(const std::string& args, int seconds = 8) {
    return testing::run_command("cd " + kDir + " && timeout -s INT " + std::to_string(seconds) + " " +
                                    testing::kGpstreamBin + " serve -m " + kModel + " --port 0 " + args,
                                kDir + "/stderr.txt");
  }
  static std::string write(const std::string& name, const std::string& text) {
    const std::string path = kDir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(ServeCli, NonLoopbackHostNeedsKeysOrInsecure) {
  for (const char* host : {"0.0.0.0", "::", "192.0.2.1"}) {
    SCOPED_TRACE(host);
    const auto r = serve(std::string("--host ") + host);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--api-key-file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // nothing listened
  }
}

TEST_F(ServeCli, KeyFileErrorsNameTheFileAndLine) {
  const std::string bad = write("keys.txt", "# keys\nalpha-key-0123456789\nshort\n");
  auto r = serve("--host 0.0.0.0 --api-key-file " + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + ":3: a key must be 16 to 256 characters long"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("alpha-key-0123456789"), std::string::npos) << "a key was printed: " << r.err;

  r = serve("--api-key-file " + kDir + "/missing.txt");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(kDir + "/missing.txt"), std::string::npos) << r.err;

  const std::string fifo = kDir + "/keys.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = serve("--api-key-file " + fifo);  // would block in open() if the file were not checked first
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(fifo), std::string::npos) << r.err;

  r = serve("--max-sessions 4 --max-sessions-per-client 5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--max-sessions-per-client 5 is more than --max-sessions 4"), std::string::npos)
      << r.err;
}

TEST_F(ServeCli, NonLoopbackHostStartsWithKeysOrInsecure) {
  const std::string keys = write("keys.txt", "alpha-key-0123456789\n");
  for (const std::string& args :
       {"--host 0.0.0.0 --api-key-file " + keys, std::string("--host 0.0.0.0 --insecure")}) {
    SCOPED_TRACE(args);
    const auto r = serve_briefly(args);
    EXPECT_EQ(r.code, 124) << r.err;  // still serving when stopped
    EXPECT_GT(std::atoi(r.out.c_str()), 0) << "no port printed: " << r.err;
    EXPECT_EQ(r.err.find("alpha-key-0123456789"), std::string::npos) << "a key was printed: " << r.err;
  }
}

}  // namespace
}  // namespace gpstream
