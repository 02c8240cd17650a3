// Private memory aligned to 2 MiB and advised MADV_HUGEPAGE, for bytes read many times over (model weights):
// where the kernel grants transparent huge pages, every full 2 MiB stretch costs one TLB entry instead of
// 512. Filled once, then optionally made read-only so a stray write faults. Also: handing back the pages of
// bytes nobody will read again (weights replaced by a repacked copy).
#pragma once

#include <cstddef>
#include <string>

#include "util/error.h"

namespace gpstream {

class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  // size bytes of zeroed, writable memory starting on a 2 MiB boundary; `what` names the use in errors.
  static Result<HugePageBuffer> allocate(size_t size, const std::string& what);
  ~HugePageBuffer();
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // Makes the whole buffer read-only (writes through data() fault afterwards).
  void make_read_only();

 private:
  void* region_ = nullptr;  // what munmap releases: larger than size_, so data_ can start on a 2 MiB boundary
  size_t region_size_ = 0;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Gives the physical pages lying wholly inside [p, p + n) back to the system (madvise MADV_DONTNEED). The
// caller promises nobody reads those bytes again: a private file mapping would re-read them from the file,
// anonymous memory would read zeros. Bytes sharing a page with anything outside the range are kept. The range
// stops being huge-page memory (MADV_NOHUGEPAGE), so the kernel does not make it resident again.
void release_pages(const void* p, size_t n);

}  // namespace gpstream
