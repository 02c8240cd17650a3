// MappedFile: both residencies hand back exactly the bytes written (generated here, not read through the
// class), the resident copy starts on a 2 MiB boundary, empty and missing files behave alike in both modes,
// GPSTREAM_MMAP picks the default, and a FIFO, a device or a directory is refused at once, naming it.
#include "util/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "../testing/fifo.h"
#include "../testing/scoped_env.h"
#include "../testing/temp_dir.h"

namespace gpstream {
namespace {

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(MappedFile, BothResidenciesReturnTheFileBytes) {
  testing::TempDir dir;
  // Odd sizes: smaller than a page, a page and a bit, and past one 2 MiB huge page.
  for (size_t n : {size_t{1}, size_t{4097}, (size_t{2} << 20) + 12345}) {
    const std::string want = random_bytes(n, static_cast<uint32_t>(n));
    std::string name = "f";
    name += std::to_string(n);  // (not "f" + …: GCC 12 warns falsely about that memcpy under -O2)
    const std::string path = dir.file(name);
    testing::write_bytes(path, want);
    for (Residency r : {Residency::Mapped, Residency::Resident}) {
      auto f = MappedFile::open(path, r);
      ASSERT_TRUE(f.ok()) << f.error().message();
      EXPECT_EQ((*f)->residency(), r);
      ASSERT_EQ((*f)->size(), n);
      EXPECT_EQ(std::memcmp((*f)->bytes().data(), want.data(), n), 0) << n << " bytes, residency " << int(r);
    }
  }
}

TEST(MappedFile, ResidentCopyStartsOnAHugePageBoundary) {
  testing::TempDir dir;
  const std::string path = dir.file("w");
  testing::write_bytes(path, random_bytes(3 << 20, 7));
  auto f = MappedFile::open(path, Residency::Resident);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*f)->bytes().data()) % (uintptr_t{2} << 20), 0u);
}

TEST(MappedFile, EmptyAndMissingFilesBehaveAlikeInBothModes) {
  testing::TempDir dir;
  const std::string empty = dir.file("empty");
  testing::write_bytes(empty, "");
  for (Residency r : {Residency::Mapped, Residency::Resident}) {
    auto f = MappedFile::open(empty, r);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ((*f)->size(), 0u);
    EXPECT_TRUE((*f)->bytes().empty());
    auto missing = MappedFile::open(dir.file("nope"), r);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("cannot open"), std::string::npos);
    auto folder = MappedFile::open(dir.path(), r);
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().message().find("not a regular file"), std::string::npos);
  }
}

TEST(MappedFile, ResidentCopyIsCheckedAgainstTheMemoryBudget) {
  testing::TempDir dir;
  const std::string path = dir.file("big");
  testing::write_bytes(path, random_bytes(8192, 3));
  testing::ScopedEnv limit("GPSTREAM_MEMORY_LIMIT", "4K");
  auto resident = MappedFile::open(path, Residency::Resident);
  ASSERT_FALSE(resident.ok());
  EXPECT_NE(resident.error().message().find("GPSTREAM_MMAP=1"), std::string::npos)
      << resident.error().message();
  EXPECT_TRUE(MappedFile::open(path, Residency::Mapped).ok());  // a mapping costs no memory of its own
}

TEST(MappedFile, GpstreamMmapChoosesTheDefaultResidency) {
  {
    testing::ScopedEnv env("GPSTREAM_MMAP", "1");
    EXPECT_EQ(default_weight_residency(), Residency::Mapped);
  }
  for (const char* v : {"0", "", "yes"}) {
    testing::ScopedEnv env("GPSTREAM_MMAP", v);
    EXPECT_EQ(default_weight_residency(), Residency::Resident) << v;
  }
  ::unsetenv("GPSTREAM_MMAP");
  EXPECT_EQ(default_weight_residency(), Residency::Resident);
}

// A FIFO's open() waits for a writer: a FIFO named like a model file hung the load. It is refused without
// blocking, naming the path, in both residencies and by the model-file text reader; a character device and
// a directory likewise. (Should it block, load_without_hanging unblocks it and the test fails.)
TEST(MappedFile, FifosDevicesAndDirectoriesAreRefusedWithoutBlocking) {
  testing::TempDir dir;
  const std::string fifo = dir.file("model.safetensors");
  ASSERT_TRUE(testing::make_fifo(fifo));
  for (Residency r : {Residency::Mapped, Residency::Resident}) {
    const auto load = testing::load_without_hanging(fifo, [&] { return MappedFile::open(fifo, r); });
    EXPECT_FALSE(load.hung) << "MappedFile::open blocked on a FIFO";
    EXPECT_FALSE(load.ok);
    EXPECT_NE(load.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << load.message;
  }
  const auto text = testing::load_without_hanging(fifo, [&] { return read_regular_text_file(fifo); });
  EXPECT_FALSE(text.hung) << "read_regular_text_file blocked on a FIFO";
  EXPECT_FALSE(text.ok);
  EXPECT_NE(text.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << text.message;

  auto device = MappedFile::open("/dev/null");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.error().message().find("/dev/null: not a regular file (a character device)"),
            std::string::npos)
      << device.error().message();
  auto folder = read_regular_text_file(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message().find(dir.path() + ": not a regular file (a directory)"),
            std::string::npos)
      << folder.error().message();
  // A regular file still reads, whole.
  const std::string path = dir.file("gpstream.json");
  const std::string want = random_bytes(200000, 11);
  testing::write_bytes(path, want);
  auto read = read_regular_text_file(path);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(*read, want);
}

}  // namespace
}  // namespace gpstream
