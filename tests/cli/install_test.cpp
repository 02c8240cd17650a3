// `cmake --install`: the installed binary, its demo page and the shipped models under a prefix, found
// relative to the binary (src/cli/install_paths.h). The installed tree is copied to another folder before it
// runs, and the binary holds no path of the source or build tree, so it works wherever it is put and after
// the source tree is gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../testing/temp_dir.h"
#include "cli_run.h"

namespace gpstream {
namespace {

namespace fs = std::filesystem;

// The command's stdout, or "exit N: " and its stdout when it fails.
std::string run(const std::string& cmd) {
  const testing::CommandRun r = testing::run_command(cmd);
  return r.code == 0 ? r.out : "exit " + std::to_string(r.code) + ": " + r.out;
}

TEST(Install, TheInstalledTreeRunsFromAnywhere) {
  testing::TempDir tmp;
  const std::string prefix = tmp.path() + "/prefix", moved = tmp.path() + "/elsewhere";
  const std::string log =
      run("cmake --install " + std::string(GPSTREAM_BINARY_DIR) + " --prefix " + prefix + " 2>&1");
  ASSERT_EQ(log.find("exit "), std::string::npos) << log;
  ASSERT_TRUE(fs::exists(prefix + "/bin/gpstream"));
  ASSERT_TRUE(fs::exists(prefix + "/share/gpstream/web/index.html"));
  ASSERT_TRUE(fs::exists(prefix + "/share/gpstream/models/gpstream-en-fr/config.json"));
  fs::rename(prefix, moved);

  // No path of the trees it was built from.
  const std::string binary = testing::read_bytes(moved + "/bin/gpstream");
  EXPECT_EQ(binary.find(GPSTREAM_SOURCE_DIR), std::string::npos);
  EXPECT_EQ(binary.find(GPSTREAM_BINARY_DIR), std::string::npos);

  // The shipped model by name, from the installed data folder: the same translation as the build tree's.
  const std::string input = "printf 'Click the button to save the document.\\n' | ";
  const std::string installed = run(input + moved + "/bin/gpstream translate -m gpstream-en-fr -k 3 2>&1");
  const std::string built = run(input + gpstream::testing::kGpstreamBin + " translate -m " +
                                GPSTREAM_SOURCE_DIR + "/models/gpstream-en-fr -k 3 2>&1");
  EXPECT_FALSE(installed.empty());
  EXPECT_EQ(installed, built);

  // serve finds its page beside the binary: GET / answers with the installed index.html.
  const std::string page =
      run("cd " + tmp.path() + " && (" + moved +
          "/bin/gpstream serve -m gpstream-en-fr --port 0 > port.txt 2>serve.log & echo $! > pid.txt);"
          " for i in $(seq 100); do [ -s port.txt ] && break; sleep 0.1; done;"
          " curl -s -H 'Accept: text/html' http://127.0.0.1:$(cat port.txt)/ ; kill $(cat pid.txt)");
  EXPECT_EQ(page, testing::read_bytes(moved + "/share/gpstream/web/index.html"));

  // The Python package, where the build made it (docs/python.md): imported from the installed tree, it
  // translates as the binary does.
  if (fs::exists(std::string(GPSTREAM_BINARY_DIR) + "/python/gpstream/__init__.py")) {
    const std::string python =
        run("PYTHONPATH=" + moved +
            "/lib/python3/dist-packages /usr/bin/python3 -c \"import gpstream; "
            "m = gpstream.Model('" +
            moved +
            "/share/gpstream/models/gpstream-en-fr', threads=1); "
            "print(m.translate('Click the button to save the document.', k=3)['translation'])\" 2>&1");
    EXPECT_EQ(python, built);
  }
}

}  // namespace
}  // namespace gpstream
