// A read-only file in memory, either mapped from the page cache (shared between processes, nothing copied) or
// read into private memory backed by 2 MiB pages where the kernel grants them (Residency::Resident): weights
// streamed once per decoded token read faster from huge pages (fewer TLB misses; docs/performance.md).
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "util/error.h"
#include "util/huge_page_buffer.h"

namespace gpstream {

enum class Residency {
  Mapped,    // mmap of the file: pages come from the page cache, shared, loaded on first touch
  Resident,  // read at open into anonymous memory advised MADV_HUGEPAGE, then made read-only
};

// How model weights are held unless a caller says otherwise: Resident, or Mapped when the environment
// variable GPSTREAM_MMAP is set to 1 (several processes sharing one copy of a large model in the page cache).
Residency default_weight_residency();

class MappedFile {
 public:
  // Refuses anything but a regular file, without blocking (open_regular_file below).
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path,
                                                  Residency residency = Residency::Mapped);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  Residency residency() const { return residency_; }

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // the file mapping (Mapped)
  HugePageBuffer resident_;  // the private copy (Resident)
  Residency residency_ = Residency::Mapped;
};

// Reads a whole (small) file into a string. Anything that can be read goes, pipes included (`--source <(…)`).
Result<std::string> read_text_file(const std::string& path);

// Model files (weights, their index, gpstream.json) must be regular files: a directory, FIFO, device or
// socket is refused with an error naming the path and what it is, before anything is read and without
// blocking (a FIFO's open would wait for a writer). open_regular_file returns a blocking read-only
// descriptor the caller closes; MappedFile::open uses it.
Result<int> open_regular_file(const std::string& path);
// The whole file, or — with `limit` — at most limit + 1 bytes of it: enough for the caller to tell that the
// file is over its limit without reading a huge one.
Result<std::string> read_regular_text_file(const std::string& path,
                                           size_t limit = std::numeric_limits<size_t>::max() - 1);

// Writes a file atomically: temporary file in the same folder, fsync, rename.
Status write_file_atomic(const std::string& path, std::span<const std::byte> bytes);

}  // namespace gpstream
