// The live view of `gpstream translate` on a terminal: the source sentence growing (dim) with its translation
// growing under it (bold), redrawn in place. The view wraps the rows itself at the terminal's width (re-read
// after SIGWINCH), so a redraw moves up exactly the rows the last one took — as the terminal has re-flowed
// them if it was resized since — and clears to the end of the screen: no stale copy in the scrollback,
// nothing overwritten. NO_COLOR (set, not empty): no styling. TERM=dumb: no cursor movement; each sentence's
// source and translation are printed once, when it is done. The layout itself is util/text_wrap.h.
// Tentative words (translate --show-tentative, the local-agreement policy) follow the translation on its
// rows, dim; they need styling, so NO_COLOR and TERM=dumb leave them out.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "util/text_wrap.h"

namespace gpstream::cli {

class LiveView {
 public:
  // A disabled view prints nothing (not a terminal, --delays, --plain).
  explicit LiveView(bool enabled);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // Shows the sentence so far: the source read, the translation written and after it, dim, the tentative
  // words (space-separated; shown only when styled).
  void draw(const std::string& src, const std::string& tgt, const std::string& tentative = "");
  // The sentence is done: its last drawing stays, followed by an empty line, and the next draw starts below.
  void next();

  const bool enabled;

 private:
  // Redraws src_ and tgt_ over the rows shown; all of them, or only the last rows that fit on the screen.
  void render(bool all_rows);
  // The rows of src_ and tgt_ at the current size and the output that draws them from `first` (returned) on.
  size_t layout(bool all_rows, std::vector<util::TextRow>& rows, std::string& out) const;
  void read_size();

  bool dumb_ = false;     // TERM=dumb: print finished sentences only
  bool styled_ = false;   // dim and bold (not under NO_COLOR)
  bool handler_ = false;  // SIGWINCH handler installed; the destructor restores old_winch_
  struct sigaction old_winch_ {};
  size_t cols_ = 80, lines_ = 24;
  std::string src_, tgt_, tentative_;
  std::vector<util::TextRow> shown_;  // the rows on screen, as they were drawn
  bool cut_ = false;                  // shown_ is only the tail of the sentence's rows
};

}  // namespace gpstream::cli
