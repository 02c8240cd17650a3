// The demo page in headless Chromium (scripts/test-browser): the example plays and translated words
// appear in the page; the script saves the DOM and a screenshot under build/browser-test/. Skipped
// when chromium is not installed (exit 77) or the gpstream binary is not built.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

TEST(Browser, DemoPageShowsTranslatedWords) {
  const std::string bin = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "gpstream binary not built";
  const std::string cmd = "GPSTREAM_BIN=" + bin + " " + std::string(GPSTREAM_SOURCE_DIR) +
                          "/scripts/test-browser " + std::string(GPSTREAM_SOURCE_DIR) +
                          "/models/gpstream-en-fr " + GPSTREAM_BINARY_DIR + "/browser-test";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "chromium is not installed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "scripts/test-browser failed";
}
