// Huge-page-aligned private buffers (see huge_page_buffer.h).
#include "util/huge_page_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace gpstream {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

Result<HugePageBuffer> HugePageBuffer::allocate(size_t size, const std::string& what) {
  HugePageBuffer b;
  if (size == 0) return b;
  if (size > SIZE_MAX - kHugePage)
    return out_of_range(what + ": " + std::to_string(size) + " bytes is too large");
  b.region_size_ = size + kHugePage;  // room to slide the start onto a 2 MiB boundary
  void* p = mmap(nullptr, b.region_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return io_error(what + ": cannot allocate " + std::to_string(size) + " bytes: " + std::strerror(errno));
  b.region_ = p;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  b.data_ = reinterpret_cast<std::byte*>(start);
  b.size_ = size;
  madvise(b.data_, size, MADV_HUGEPAGE);  // advice only: without THP the memory is 4 KiB pages
  return b;
}

HugePageBuffer::~HugePageBuffer() {
  if (region_) munmap(region_, region_size_);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : region_(std::exchange(other.region_, nullptr)),
      region_size_(std::exchange(other.region_size_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    if (region_) munmap(region_, region_size_);
    region_ = std::exchange(other.region_, nullptr);
    region_size_ = std::exchange(other.region_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void HugePageBuffer::make_read_only() {
  if (region_) mprotect(region_, region_size_, PROT_READ);
}

void release_pages(const void* p, size_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  const uintptr_t last = (begin + n) & ~(page - 1);
  if (last <= first) return;
  // Not huge pages first: khugepaged, which fills in 2 MiB pages of MADV_HUGEPAGE memory long after it was
  // touched, would otherwise collapse a released range back into resident (zero) pages at some later time,
  // and the process's memory would creep back up to the buffer's whole size over hours.
  madvise(reinterpret_cast<void*>(first), last - first, MADV_NOHUGEPAGE);
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace gpstream
