// Progress line on stderr (progress_line.h).
#include "cli/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace gpstream::cli {

ProgressLine::ProgressLine() : tty_(isatty(STDERR_FILENO) != 0) {}

void ProgressLine::message(const std::string& text) {
  close();
  std::fprintf(stderr, "%s\n", text.c_str());
}

void ProgressLine::update(const std::string& text, bool keep, bool log) {
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    open_ = true;
    if (keep) close();
  } else if (log) {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::close() {
  if (open_) std::fprintf(stderr, "\n");
  open_ = false;
}

}  // namespace gpstream::cli
