// A barrier for a team of threads that is already running and meets many times per millisecond (one
// decode step meets ~150 times): waiting threads spin on a generation counter, pausing the core, and
// yield their time slice only after a long wait, so a meeting costs about a microsecond instead of
// the tens of microseconds of a sleep and a wake-up (docs/performance.md, the decode team).
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gpstream {

class SpinBarrier {
 public:
  // Blocks until `team` threads (the same number from each) have arrived. Writes made before arriving
  // are visible to every thread after it returns.
  void arrive_and_wait(int team) {
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == team) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
      if (spins < kSpinsBeforeYield) {
        pause();
      } else {
        std::this_thread::yield();  // a long wait: the other thread was descheduled
      }
    }
  }

 private:
  static constexpr int kSpinsBeforeYield = 1 << 14;
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> generation_{0};
};

}  // namespace gpstream
