// HugePageBuffer and release_pages: released pages leave the resident set and their range stops being
// huge-page memory (the kernel's VmFlags in /proc/self/smaps: "hg" for MADV_HUGEPAGE, "nh" for
// MADV_NOHUGEPAGE), so khugepaged cannot fill them in again later.
#include "util/huge_page_buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace gpstream {
namespace {

// The VmFlags line of the mapping that holds address `a`, or "" when none does.
std::string vm_flags_at(const void* a) {
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto addr = reinterpret_cast<uintptr_t>(a);
  while (std::getline(f, line)) {
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash > 0 && line.find(' ') > dash &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      const uintptr_t lo = std::strtoull(line.substr(0, dash).c_str(), nullptr, 16);
      const uintptr_t hi = std::strtoull(line.substr(dash + 1).c_str(), nullptr, 16);
      inside = lo <= addr && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& f) {
  std::istringstream in(flags.substr(8));
  std::string w;
  while (in >> w)
    if (w == f) return true;
  return false;
}

TEST(HugePageBuffer, ReleasedPagesStopBeingHugePageMemory) {
  const size_t mb = size_t{1} << 20;
  auto b = HugePageBuffer::allocate(8 * mb, "test");
  ASSERT_TRUE(b.ok()) << b.error().message();
  std::memset(b->data(), 1, 8 * mb);
  const std::string before = vm_flags_at(b->data() + 3 * mb);
  ASSERT_FALSE(before.empty());
  if (!has_flag(before, "hg")) GTEST_SKIP() << "this kernel reports no MADV_HUGEPAGE flag: " << before;
  release_pages(b->data() + 2 * mb, 4 * mb);
  EXPECT_TRUE(has_flag(vm_flags_at(b->data() + 3 * mb), "nh")) << vm_flags_at(b->data() + 3 * mb);
  // The rest of the buffer keeps its advice and its bytes.
  EXPECT_TRUE(has_flag(vm_flags_at(b->data() + 7 * mb), "hg"));
  EXPECT_EQ(static_cast<unsigned char>(b->data()[7 * mb]), 1u);
  EXPECT_EQ(static_cast<unsigned char>(b->data()[2 * mb + 5]), 0u) << "released anonymous memory reads zeros";
}

}  // namespace
}  // namespace gpstream
