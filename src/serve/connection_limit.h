// How many TCP connections the server serves at once, and what counts one. The default stays below the
// process's descriptor limit (RLIMIT_NOFILE) so that connections alone cannot exhaust descriptors: a reserve
// is kept for the process's own files (listener, event loop, log file) and for the short-lived refusals that
// answer connections past the limit with 503. A ConnectionSlot is held by whatever serves one connection (the
// HTTP session, then the WebSocket stream it becomes) and gives the place back when destroyed.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpstream::serve {

// Descriptors kept for the process itself, and the refusals (503 written, then closed) in flight at most.
inline constexpr int kReservedDescriptors = 32;
inline constexpr int kMaxRefusalsInFlight = 16;
// The default when the descriptor limit is large (or unlimited).
inline constexpr int kDefaultMaxConnections = 512;

// min(kDefaultMaxConnections, soft RLIMIT_NOFILE − kReservedDescriptors − kMaxRefusalsInFlight), at
// least 1.
int default_max_connections();
// The same from a given soft limit (RLIM_INFINITY as a negative value: unlimited).
int max_connections_for_descriptor_limit(long long soft_limit);

// accept() failed with this errno for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the
// listener stays readable, so accepting again at once would spin; the server waits and retries.
bool is_resource_exhaustion(int errno_value);

class ConnectionSlot {
 public:
  ConnectionSlot() = default;
  // Takes a place in `open` (incremented now, decremented when the slot is destroyed).
  explicit ConnectionSlot(std::atomic<int64_t>& open) : open_(&open) { open.fetch_add(1); }
  ConnectionSlot(ConnectionSlot&& other) noexcept : open_(other.open_) { other.open_ = nullptr; }
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept {
    if (this != &other) {
      release();
      open_ = other.open_;
      other.open_ = nullptr;
    }
    return *this;
  }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
  ~ConnectionSlot() { release(); }

 private:
  void release() {
    if (open_) open_->fetch_sub(1);
    open_ = nullptr;
  }
  std::atomic<int64_t>* open_ = nullptr;
};

}  // namespace gpstream::serve
