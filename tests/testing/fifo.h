// Loading from a FIFO without letting a test hang: the load runs on its own thread, and if it has not
// returned within a few seconds (it is blocked in open(), waiting for a writer) the FIFO's write end is
// opened and closed until it returns, so a missing guard fails the test instead of blocking the run.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <utility>

#include "util/error.h"

namespace gpstream::testing {

inline bool make_fifo(const std::string& path) {
  return ::mkfifo(path.c_str(), 0600) == 0;
}

struct FifoLoad {
  bool hung = false;    // had not returned after `limit`: blocked on the FIFO
  bool ok = false;      // the load succeeded
  std::string message;  // its error otherwise
};

// `load` returns a Status or Result<T>; `fifo` is the FIFO it reads.
template <typename Load>
FifoLoad load_without_hanging(const std::string& fifo, Load load,
                              std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto done = std::async(std::launch::async, [&load] {
    auto r = load();
    return std::pair<bool, std::string>(r.ok(), r.ok() ? "" : r.error().message());
  });
  FifoLoad out;
  if (done.wait_for(limit) != std::future_status::ready) {
    out.hung = true;
    // A reader waiting in open() lets a non-blocking writer open; once it has a partner it returns, and a
    // read after the writer closes sees end of file.
    for (int i = 0; i < 50 && done.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready; ++i) {
      const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      (void)done.wait_for(std::chrono::milliseconds(100));
      if (w >= 0) ::close(w);
    }
  }
  auto [ok, message] = done.get();
  out.ok = ok;
  out.message = message;
  return out;
}

}  // namespace gpstream::testing
