// Helpers shared by the audio tests: raw little-endian float32 fixtures (written by
// scripts/make-audio-fixtures).
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpstream::testing {

// The whole file as float32 values (a trailing partial value is ignored; a missing file gives none).
inline std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

}  // namespace gpstream::testing
