// A read-only memory-mapped file. Model weights stay in the page cache and are shared between
// processes; nothing is copied at load time.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "util/error.h"

namespace gpstream {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) file into a string.
Result<std::string> read_text_file(const std::string& path);

// Writes a file atomically: temporary file in the same folder, fsync, rename.
Status write_file_atomic(const std::string& path, std::span<const std::byte> bytes);

}  // namespace gpstream
