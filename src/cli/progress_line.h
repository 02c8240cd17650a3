// Progress of a long command on stderr: on a terminal one line rewritten in place (kept on screen when a
// step is worth keeping, e.g. one with a dev loss); otherwise plain lines, only for the steps asked for.
// Messages in between end an open line first.
#pragma once

#include <string>

namespace gpstream::cli {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine() { close(); }
  // A message on its own line.
  void message(const std::string& text);
  // A progress update: keep = leave it on screen (terminal); log = print it when not on a terminal.
  void update(const std::string& text, bool keep, bool log);
  // Ends an open line (before printing results).
  void close();

 private:
  bool tty_;
  bool open_ = false;
};

}  // namespace gpstream::cli
