// SHA-256 (FIPS 180-4): incremental hashing of bytes and whole files, as lower-case hex for records of what
// produced a result (eval/run_config.h). Plain portable C++, about 200-300 MB/s; no SHA extensions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // The digest of everything updated so far; the object then starts over.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;  // bytes
};

std::string to_hex(const std::array<uint8_t, 32>& digest);
std::string sha256_hex(std::string_view data);
// The SHA-256 of a file's bytes, read in 1 MiB pieces; errors name the file.
Result<std::string> sha256_file_hex(const std::string& path);

}  // namespace gpstream
