// The live view of `gpstream translate` (live_view.h).
#include "cli/live_view.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpstream::cli {
namespace {

// Set by the SIGWINCH handler, read and cleared by the view: a signal handler can do nothing else safely, so
// this one flag is process-wide.
volatile std::sig_atomic_t g_resized = 0;

extern "C" void on_winch(int) {
  g_resized = 1;
}

constexpr const char* kDim = "\033[2m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// no-color.org: NO_COLOR present and not empty, whatever its value.
bool no_color() {
  const char* v = std::getenv("NO_COLOR");
  return v != nullptr && v[0] != '\0';
}

}  // namespace

LiveView::LiveView(bool enabled) : enabled(enabled) {
  if (!enabled) return;
  dumb_ = env_is("TERM", "dumb");
  styled_ = !dumb_ && !no_color();
  if (dumb_) return;
  struct sigaction sa {};
  sa.sa_handler = on_winch;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // stdin is read in between: a resize must not fail that read with EINTR
  handler_ = sigaction(SIGWINCH, &sa, &old_winch_) == 0;
  read_size();
}

LiveView::~LiveView() {
  if (handler_) sigaction(SIGWINCH, &old_winch_, nullptr);
}

void LiveView::read_size() {
  struct winsize ws {};
  const bool ok = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
  cols_ = ok && ws.ws_col > 0 ? ws.ws_col : 80;
  lines_ = ok && ws.ws_row > 0 ? ws.ws_row : 24;
}

void LiveView::draw(const std::string& src, const std::string& tgt, const std::string& tentative) {
  if (!enabled) return;
  src_ = src;
  tgt_ = tgt;
  tentative_ = styled_ ? tentative : "";
  if (!dumb_) render(false);
}

void LiveView::render(bool all_rows) {
  std::vector<util::TextRow> rows;
  std::string out;
  size_t first = 0;
  // Laid out again if the terminal is resized meanwhile, so that what is written fits its latest size.
  do {
    if (g_resized) {  // cleared before reading, so a resize during the read is seen on the next pass
      g_resized = 0;
      read_size();
    }
    first = layout(all_rows, rows, out);
  } while (g_resized);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  shown_.assign(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end());
  cut_ = first > 0;
}

size_t LiveView::layout(bool all_rows, std::vector<util::TextRow>& rows, std::string& out) const {
  rows = util::wrap_text(src_, cols_);
  const size_t n_src = rows.size();
  // Tentative words continue the translation's rows. Wrapping is greedy, so the translation's rows alone are
  // those of the whole up to its last row, which the tentative words may extend: they start at byte
  // `tentative_at` of row `tentative_row` (counted from the first translation row).
  size_t tentative_row = std::string::npos, tentative_at = 0;
  const bool tentative = !util::wrap_text(tentative_, cols_).front().text.empty();
  std::vector<util::TextRow> tgt_rows = util::wrap_text(tentative ? tgt_ + " " + tentative_ : tgt_, cols_);
  if (tentative) {
    const std::vector<util::TextRow> own = util::wrap_text(tgt_, cols_);
    if (own.back().text.empty()) {  // no translation yet: all tentative
      tentative_row = 0;
    } else if (own.size() <= tgt_rows.size() &&
               tgt_rows[own.size() - 1].text.compare(0, own.back().text.size(), own.back().text) == 0) {
      tentative_row = own.size() - 1;
      tentative_at = own.back().text.size();
    } else {
      tentative_row = own.size();  // not expected; the rows after the translation's are tentative
    }
  }
  for (util::TextRow& r : tgt_rows) rows.push_back(std::move(r));
  // The rows and the cursor's row below them must fit on the screen, or the first rows scroll out of reach
  // of a cursor-up: until the sentence is done, only its last rows are shown.
  const size_t fit = std::max<size_t>(lines_ - 1, 1);
  const size_t first = !all_rows && rows.size() > fit ? rows.size() - fit : 0;

  out.clear();
  if (!shown_.empty()) {
    // The rows drawn last take reflowed_rows at the width the terminal has now (re-flowed if it shrank).
    out = "\r\033[" + std::to_string(util::reflowed_rows(shown_, cols_)) + "A";
  }
  // Each row clears its line first, and the rest of the screen is cleared only below the new rows: a clear
  // from the top-left corner would be a whole-screen clear, which some terminals (tmux's scroll-on-clear)
  // turn into a copy of the screen in the scrollback.
  for (size_t i = first; i < rows.size(); ++i) {
    out += "\033[K";
    const size_t t = i - n_src;  // the translation's row, where i >= n_src
    if (i >= n_src && tentative_row != std::string::npos && t >= tentative_row) {
      const std::string& text = rows[i].text;
      const size_t at = t == tentative_row ? std::min(tentative_at, text.size()) : 0;
      if (at > 0) out += kBold + text.substr(0, at) + kReset;
      out += kDim + text.substr(at) + kReset;
      out += '\n';
      continue;
    }
    if (styled_) out += i < n_src ? kDim : kBold;
    out += rows[i].text;
    if (styled_) out += kReset;
    out += '\n';
  }
  out += "\033[J";
  return first;
}

void LiveView::next() {
  if (!enabled) return;
  // Tentative words left on screen are stale once the sentence is done.
  const bool stale = !tentative_.empty();
  tentative_.clear();
  if (dumb_) {
    std::printf("%s\n%s\n", util::sanitize_for_terminal(src_).c_str(),
                util::sanitize_for_terminal(tgt_).c_str());
  } else if (cut_ || stale) {
    render(true);
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  src_.clear();
  tgt_.clear();
  tentative_.clear();
  shown_.clear();
  cut_ = false;
}

}  // namespace gpstream::cli
