// Readings of the monotonic clock (std::chrono::steady_clock) as plain numbers, for timing and pacing: only
// differences between two readings mean anything.
#pragma once

#include <chrono>

namespace gpstream {

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace gpstream
