// Helpers shared by the libFuzzer targets: the fuzz input as text, and as a file for the parsers that read
// paths (written to a per-process file under $TMPDIR, rewritten for every input).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpstream::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Writes the input to a scratch file named `<tmp>/gpstream-fuzz-<pid><suffix>` and returns its path.
inline std::string as_file(const uint8_t* data, size_t size, const char* suffix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/gpstream-fuzz-" + std::to_string(getpid()) + suffix;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace gpstream::fuzz
