// Replays inputs through a fuzz target without libFuzzer: every file named on the command line (folders
// are walked) goes through LLVMFuzzerTestOneInput once. Built into the normal and sanitizer test runs
// (ctest -L fuzz), so the seed corpora and every crash ever found stay regression tests.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int replay_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0, failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path root(argv[i]);
    if (!std::filesystem::exists(root)) continue;  // a target without regressions yet
    if (std::filesystem::is_directory(root)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(root))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) failures += replay_file(f), ++n;
    } else {
      failures += replay_file(root), ++n;
    }
  }
  std::printf("replayed %d inputs\n", n);
  if (n == 0) std::fprintf(stderr, "replay: no inputs found (the seed corpus is missing)\n");
  return failures || n == 0 ? 1 : 0;
}
