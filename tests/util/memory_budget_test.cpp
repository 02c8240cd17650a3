// Memory budget: size parsing and formatting (hand-computed values), the budget source (against sysconf,
// read separately), and refusals under GPSTREAM_MEMORY_LIMIT.
#include "util/memory_budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <limits>

#include "../testing/scoped_env.h"

namespace gpstream {
namespace {

TEST(ByteSize, ParsesUnitsAsPowersOf1024) {
  EXPECT_EQ(*parse_byte_size("0"), 0u);
  EXPECT_EQ(*parse_byte_size("100"), 100u);
  EXPECT_EQ(*parse_byte_size("100B"), 100u);
  EXPECT_EQ(*parse_byte_size("64K"), 65536u);
  EXPECT_EQ(*parse_byte_size("1KiB"), 1024u);
  EXPECT_EQ(*parse_byte_size("512M"), 536870912u);
  EXPECT_EQ(*parse_byte_size("512mb"), 536870912u);
  EXPECT_EQ(*parse_byte_size("8G"), 8589934592u);
  EXPECT_EQ(*parse_byte_size("2T"), 2199023255552u);
}

TEST(ByteSize, RefusesMalformedAndOverflowingSizes) {
  for (const char* bad : {"", "G", "-1", "1.5G", "12X", "8 G", "99999999999999999999", "17179869184G", "1GG"})
    EXPECT_FALSE(parse_byte_size(bad).ok()) << bad;
}

TEST(ByteSize, FormatsWithBinaryUnits) {
  EXPECT_EQ(format_bytes(900), "900 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(uint64_t{3} << 30), "3.0 GiB");
}

TEST(ByteSize, SaturatingArithmeticDoesNotWrap) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(saturating_product({uint64_t{1} << 40, uint64_t{1} << 40}), max);
  EXPECT_EQ(saturating_product({uint64_t{1} << 40, uint64_t{1} << 40, 0}), 0u);
  EXPECT_EQ(saturating_product({3, 5, 7}), 105u);
  EXPECT_EQ(saturating_sum({max - 1, 5}), max);
  EXPECT_EQ(saturating_sum({2, 3}), 5u);
}

TEST(MemoryBudget, DefaultIsAtMostThePhysicalMemory) {
  ::unsetenv("GPSTREAM_MEMORY_LIMIT");
  const auto budget = memory_budget_bytes();
  ASSERT_TRUE(budget.has_value());
  const uint64_t physical =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_GT(*budget, 0u);
  EXPECT_LE(*budget, physical);
  EXPECT_TRUE(check_memory_budget(1 << 20, "a small thing").ok());
  const Status huge = check_memory_budget(std::numeric_limits<uint64_t>::max(), "an absurd model");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), ErrorCode::OutOfRange);
  EXPECT_NE(huge.error().message().find("an absurd model needs about"), std::string::npos)
      << huge.error().message();
}

TEST(MemoryBudget, EnvironmentLimitAppliesAndCanBeTurnedOff) {
  {
    testing::ScopedEnv env("GPSTREAM_MEMORY_LIMIT", "1M");
    EXPECT_EQ(memory_budget_bytes(), std::optional<uint64_t>(1 << 20));
    EXPECT_TRUE(check_memory_budget(1 << 20, "exactly the limit").ok());
    const Status over = check_memory_budget((1 << 20) + 1, "one byte more");
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.error().message().find("GPSTREAM_MEMORY_LIMIT"), std::string::npos);
  }
  {
    testing::ScopedEnv env("GPSTREAM_MEMORY_LIMIT", "off");
    EXPECT_FALSE(memory_budget_bytes().has_value());
    EXPECT_TRUE(check_memory_budget(std::numeric_limits<uint64_t>::max(), "anything").ok());
  }
  {
    testing::ScopedEnv env("GPSTREAM_MEMORY_LIMIT", "lots");
    const Status s = check_memory_budget(1, "anything");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::InvalidArgument);
  }
}

}  // namespace
}  // namespace gpstream
