// The demo page in headless Chromium (scripts/test-browser): the example plays and translated words
// appear in the page (and, with the local-agreement policy, tentative words); the script saves the DOM and a
// screenshot under build/browser-test/. Skipped when chromium is not installed (exit 77) or the gpstream
// binary is not built.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

// scripts/test-browser's exit status, with `env` before it (e.g. "POLICY=local-agreement").
int run_test_browser(const std::string& env, const std::string& out) {
  const std::string bin = std::string(GPSTREAM_BINARY_DIR) + "/gpstream";
  const std::string cmd = env + " GPSTREAM_BIN=" + bin + " " + std::string(GPSTREAM_SOURCE_DIR) +
                          "/scripts/test-browser " + std::string(GPSTREAM_SOURCE_DIR) +
                          "/models/gpstream-en-fr " + GPSTREAM_BINARY_DIR + "/" + out;
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(Browser, DemoPageShowsTranslatedWords) {
  if (!std::filesystem::exists(std::string(GPSTREAM_BINARY_DIR) + "/gpstream"))
    GTEST_SKIP() << "gpstream binary not built";
  const int code = run_test_browser("", "browser-test");
  if (code == 77) GTEST_SKIP() << "chromium is not installed";
  EXPECT_EQ(code, 0) << "scripts/test-browser failed";
}

// With the local-agreement policy the page shows the tentative words, greyed, as they come.
TEST(Browser, DemoPageShowsTentativeWordsWithLocalAgreement) {
  if (!std::filesystem::exists(std::string(GPSTREAM_BINARY_DIR) + "/gpstream"))
    GTEST_SKIP() << "gpstream binary not built";
  const int code = run_test_browser("POLICY=local-agreement", "browser-test-tentative");
  if (code == 77) GTEST_SKIP() << "chromium is not installed";
  EXPECT_EQ(code, 0) << "POLICY=local-agreement scripts/test-browser failed";
}
