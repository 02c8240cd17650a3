// Memory budget: work whose size follows from declared numbers (a config's layer sizes, a training shape, a
// session's cache cap) is checked against the memory this machine has before anything is allocated, so a
// hostile or mistaken config gets one clear error instead of an out-of-memory kill halfway through.
// The budget is MemAvailable from /proc/meminfo (physical memory where that is missing), or the
// environment variable GPSTREAM_MEMORY_LIMIT: a size such as "512M", "8G" or a plain byte count; "0" or
// "off" turns the check off.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream {

// "1234", "64K", "512M", "8G", "1T" (powers of 1024; an optional trailing "B" or "iB"). Errors name the text.
Result<uint64_t> parse_byte_size(std::string_view text);
// "1.5 GiB", "12.0 MiB", "900 B".
std::string format_bytes(uint64_t bytes);

// The budget in bytes; nullopt when the check is off (GPSTREAM_MEMORY_LIMIT=0/off, or nothing readable).
std::optional<uint64_t> memory_budget_bytes();

// OutOfRange error "WHAT needs about X but Y is available (…)" when bytes exceed the budget.
Status check_memory_budget(uint64_t bytes, std::string_view what);

// a * b * … in bytes, saturating at UINT64_MAX instead of wrapping (declared sizes may be absurd).
uint64_t saturating_product(std::initializer_list<uint64_t> factors);
// a + b saturating.
uint64_t saturating_sum(std::initializer_list<uint64_t> terms);

}  // namespace gpstream
