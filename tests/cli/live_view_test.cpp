// End-to-end checks of the live view of `gpstream translate` (cli/live_view.h) in a pseudo-terminal, on the
// shipped en-fr model paced at 20 words/s. In tmux at 40, 80 and 200 columns, in a screen too short for a
// sentence, and with the window resized again and again while it runs, the final screen and the scrollback
// hold each sentence exactly once — its source (the input line) on whole rows, then its translation (what
// `--plain` prints, a path without the view) — and nothing else: a stale copy or an overwritten row would
// add or break a row. At a fixed width no row is wider than the terminal and each breaks where the next word
// would not fit. Raw output from `script`'s pty: under NO_COLOR no SGR sequence (ESC [ ... m) but still the
// cursor movement, under TERM=dumb no escape sequence at all and each sentence printed once. With
// --policy local-agreement --show-tentative: tentative words drawn dim after the bold translation on its row,
// none under NO_COLOR, and a final screen with each sentence once, as without them.
// Skipped, saying why, without tmux, script or the gpstream binary.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"

namespace gpstream {
namespace {

const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/live_view_test_tmp/" + std::to_string(getpid());
const std::string kModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

// Single-spaced, no word wider than 40 columns, the longest 140 columns.
const std::vector<std::string> kSources = {
    "Open the file.",
    "Save the document in a new folder before you close the window.",
    "Click the button at the top of the window to open the settings, then choose a folder and save the "
    "document before you close the application.",
    "Click OK.",
    "The file is saved in your home folder.",
    "Do you want to delete this folder?",
};

// A shell command's stdout.
std::string sh(const std::string& cmd) {
  return testing::run_command(cmd).out;
}

bool have_tool(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Columns of text with no wide or combining characters: its code points (the bytes that do not continue one).
size_t columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string join(const std::vector<std::string>& rows, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) s += (i > begin ? " " : "") + rows[i];
  return s;
}

std::string numbered(const std::vector<std::string>& lines) {
  std::string s;
  for (size_t i = 0; i < lines.size(); ++i) s += std::to_string(i) + "|" + lines[i] + "|\n";
  return s;
}

// The captured terminal, top to bottom, against the sentences: each one's source rows, then its translation
// rows, then an empty line, and nothing else. With width > 0: no row wider, and every row but the last of the
// source and of the translation full enough that the next row's first word would not have fitted.
void expect_each_sentence_once(const std::vector<std::string>& captured, const std::vector<std::string>& tgt,
                               size_t width) {
  std::vector<std::string> lines = captured;
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t top = 0;
  while (top < lines.size() && lines[top].empty()) ++top;
  std::vector<std::vector<std::string>> blocks(1);
  for (size_t i = top; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      blocks.emplace_back();
    } else {
      blocks.back().push_back(lines[i]);
    }
  }
  ASSERT_EQ(blocks.size(), kSources.size()) << numbered(lines);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::vector<std::string>& rows = blocks[b];
    size_t split = 0;
    for (size_t j = 1; j < rows.size() && split == 0; ++j)
      if (join(rows, 0, j) == kSources[b] && join(rows, j, rows.size()) == tgt[b]) split = j;
    ASSERT_NE(split, 0u) << "sentence " << b << " is not its source then its translation:\n"
                         << numbered(lines);
    if (width == 0) continue;
    for (size_t r = 0; r < rows.size(); ++r) {
      EXPECT_LE(columns(rows[r]), width) << "row " << r << " of sentence " << b << ": " << rows[r];
      if (r + 1 == split || r + 1 == rows.size()) continue;
      const std::string next_word = rows[r + 1].substr(0, rows[r + 1].find(' '));
      EXPECT_GT(columns(rows[r]) + 1 + columns(next_word), width)
          << "row " << r << " of sentence " << b << " had room for '" << next_word << "':\n"
          << numbered(lines);
    }
  }
}

// A tmux server of its own (own socket, no configuration), killed with the test.
class Tmux {
 public:
  Tmux()
      : cmd_("LC_ALL=C.UTF-8 tmux -u -L gpstream-live-view-" + std::to_string(getpid()) + "-" +
             std::to_string(next_id_++) + " -f /dev/null ") {}
  ~Tmux() { sh(cmd_ + "kill-server 2>/dev/null"); }
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;
  std::string operator()(const std::string& args) { return sh(cmd_ + args); }
  bool has_session() { return std::system((cmd_ + "has-session -t t 2>/dev/null").c_str()) == 0; }

 private:
  static inline int next_id_ = 0;  // a server per window: a killed one may still hold its socket a while
  std::string cmd_;
};

class LiveViewCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
    std::ofstream in(kDir + "/in.txt");
    for (const std::string& s : kSources) in << s << "\n";
  }

  // What `--plain` prints for the input: one translation per sentence.
  std::vector<std::string> plain_translations(const std::string& args = "") {
    auto r = testing::run_gpstream(kDir, "translate -m " + kModel + " --plain " + args + " < in.txt");
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::string> tgt = split_lines(r.out);
    EXPECT_EQ(tgt.size(), kSources.size()) << r.out;
    for (const std::string& t : tgt) EXPECT_FALSE(t.empty()) << r.out;
    return tgt;
  }

  // Runs the paced translation in a width x height tmux window (after `prefill` empty lines, so that it
  // starts at the bottom of a used screen), calling on_tick every 100 ms until it ends; returns the whole
  // capture (history and screen, `join`: with lines the terminal wrapped joined back).
  std::vector<std::string> run_in_tmux(Tmux& tmux, int width, int height, int prefill, bool join,
                                       const std::function<void(int tick)>& on_tick = {},
                                       const std::string& args = "") {
    std::filesystem::remove(kDir + "/rc.txt");
    std::ofstream(kDir + "/run.sh") << "cd " << kDir << " || exit 1\n"
                                    << "unset NO_COLOR\n"
                                    << "i=0; while [ $i -lt " << prefill << " ]; do echo; i=$((i+1)); done\n"
                                    << testing::kGpstreamBin << " translate -m " << kModel << " --pace 20 "
                                    << args << " < in.txt 2> err.txt\n"
                                    << "echo $? > rc.tmp && mv rc.tmp rc.txt\n"
                                    << "exec sleep 600\n";
    tmux("new-session -d -s t -x " + std::to_string(width) + " -y " + std::to_string(height) + " 'sh " +
         kDir + "/run.sh'");
    for (int tick = 0; !std::filesystem::exists(kDir + "/rc.txt"); ++tick) {
      if (tick > 3000 || (tick % 10 == 9 && !tmux.has_session())) {
        ADD_FAILURE() << "no end after " << tick / 10 << " s:\n" << tmux("capture-pane -p -t t -S - -E -");
        return {};
      }
      if (on_tick) on_tick(tick);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(read_text(kDir + "/rc.txt"), "0\n") << read_text(kDir + "/err.txt");
    const std::string history = tmux("display -p -t t '#{history_size}'");
    EXPECT_NE(history, "0\n") << "the output should have scrolled into the history";
    return split_lines(tmux(std::string("capture-pane -p") + (join ? "J" : "") + " -t t -S - -E -"));
  }
};

class LiveViewTmux : public LiveViewCli {
 protected:
  void SetUp() override {
    LiveViewCli::SetUp();
    if (IsSkipped()) return;
    if (!have_tool("tmux")) GTEST_SKIP() << "tmux not installed (apt-get install tmux)";
  }
};

TEST_F(LiveViewTmux, EachSentenceOnceAt40And80And200Columns) {
  const std::vector<std::string> tgt = plain_translations();
  ASSERT_EQ(tgt.size(), kSources.size());
  for (int width : {40, 80, 200}) {
    SCOPED_TRACE("width " + std::to_string(width));
    Tmux tmux;
    const std::vector<std::string> lines = run_in_tmux(tmux, width, 12, 0, false);
    expect_each_sentence_once(lines, tgt, static_cast<size_t>(width));
    // The view breaks its rows itself: the terminal wrapped no line, so joining wrapped lines changes
    // nothing.
    EXPECT_EQ(split_lines(tmux("capture-pane -pJ -t t -S - -E -")), lines);
    if (width == 40) {
      // By hand: "Save the document in a new folder before" is 4+3+8+2+1+3+6+6 letters and 7 spaces: 40.
      const std::vector<std::string> second = {"Save the document in a new folder before",
                                               "you close the window."};
      auto at = std::find(lines.begin(), lines.end(), second[0]);
      ASSERT_NE(at, lines.end()) << numbered(lines);
      ASSERT_NE(at + 1, lines.end());
      EXPECT_EQ(at[1], second[1]);
      EXPECT_EQ(std::count(lines.begin(), lines.end(), second[0]), 1);
    }
  }
}

TEST_F(LiveViewTmux, ASentenceTallerThanTheScreenIsShownWholeOnceDone) {
  // At 40 columns the long sentence takes 4 source rows and more translation rows than a 6-row screen holds.
  const std::vector<std::string> tgt = plain_translations();
  ASSERT_EQ(tgt.size(), kSources.size());
  Tmux tmux;
  expect_each_sentence_once(run_in_tmux(tmux, 40, 6, 0, false), tgt, 40);
}

TEST_F(LiveViewTmux, ResizesWhileRunningLeaveNoStaleCopy) {
  const std::vector<std::string> tgt = plain_translations();
  ASSERT_EQ(tgt.size(), kSources.size());
  // A new width every 0.5 s, narrower and wider, while sentences are drawn. tmux re-flows the rows already
  // on screen: the capture joins the lines it wrapped back into the rows the view drew, at their widths.
  // The run starts at the bottom of a filled screen: tmux keeps the cursor's screen row when it re-flows, so
  // on a screen not filled yet a narrowing pushes rows out of reach (the limit docs/streaming.md states).
  const std::vector<int> widths = {80, 40, 100, 55, 200, 40, 70, 45, 120};
  // tmux re-flows its screen at a new width a moment before the program learns of it (SIGWINCH), so a redraw
  // already on its way can meet the old layout: on a loaded machine this race shows about once in twenty
  // runs. One retry: a run that fails twice is reported with the second run's failures.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Tmux tmux;  // a fresh server and window per run
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter capture(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      const std::vector<std::string> lines = run_in_tmux(tmux, 80, 24, 24, true, [&](int tick) {
        if (tick % 5 == 4)
          tmux("resize-window -t t -y 24 -x " +
               std::to_string(widths[(static_cast<size_t>(tick) / 5) % widths.size()]));
      });
      expect_each_sentence_once(lines, tgt, 0);
    }
    if (failures.size() == 0) return;
    if (attempt == 0) continue;
    for (int i = 0; i < failures.size(); ++i) {
      const ::testing::TestPartResult& f = failures.GetTestPartResult(i);
      ADD_FAILURE_AT(f.file_name() ? f.file_name() : "?", f.line_number()) << f.message();
    }
  }
}

// Raw output of the paced translation of the first two sentences in script's pseudo-terminal (80 x 24 when
// script's own input is not a terminal), with the given environment.
std::string raw_pty_output(const std::string& env, const std::string& args = "") {
  std::ofstream(kDir + "/in2.txt") << kSources[0] << "\n" << kSources[1] << "\n";
  const std::string cmd = "cd " + kDir + " && env " + env + " script -qfec '" + testing::kGpstreamBin +
                          " translate -m " + kModel + " --pace 20 " + args +
                          " < in2.txt 2> err.txt' /dev/null < /dev/null";
  return sh(cmd);
}

class LiveViewPty : public LiveViewCli {
 protected:
  void SetUp() override {
    LiveViewCli::SetUp();
    if (IsSkipped()) return;
    if (!have_tool("script")) GTEST_SKIP() << "script (util-linux) not installed";
  }
};

const std::regex kSgr("\033\\[[0-9;]*m");
const std::regex kCursorUp("\033\\[[0-9]+A");

TEST_F(LiveViewPty, NoColorDropsStylingButNotTheLiveRedraw) {
  const std::string styled = raw_pty_output("-u NO_COLOR TERM=xterm-256color");
  EXPECT_TRUE(std::regex_search(styled, kSgr)) << "the view styles rows unless NO_COLOR is set";
  EXPECT_TRUE(std::regex_search(styled, kCursorUp)) << styled;
  const std::string plain = raw_pty_output("NO_COLOR=1 TERM=xterm-256color");
  EXPECT_FALSE(std::regex_search(plain, kSgr)) << plain;
  EXPECT_TRUE(std::regex_search(plain, kCursorUp)) << plain;
}

TEST_F(LiveViewPty, DumbTerminalGetsEachSentenceOnceWithoutEscapes) {
  const std::vector<std::string> tgt = plain_translations();
  ASSERT_EQ(tgt.size(), kSources.size());
  std::string raw = raw_pty_output("-u NO_COLOR TERM=dumb");
  EXPECT_EQ(raw.find('\033'), std::string::npos) << raw;
  std::erase(raw, '\r');  // the pty turns every newline into CR LF
  EXPECT_EQ(raw, kSources[0] + "\n" + tgt[0] + "\n\n" + kSources[1] + "\n" + tgt[1] + "\n\n");
}

const std::string kTentative = "--policy local-agreement --show-tentative";

TEST_F(LiveViewPty, TentativeWordsAreDimAfterTheTranslationAndNotUnderNoColor) {
  const std::string styled = raw_pty_output("-u NO_COLOR TERM=xterm-256color", kTentative);
  // A row with the translation (bold) and tentative words after it (dim): bold, reset, then dim at once.
  const std::regex bold_then_dim("\033\\[1m[^\033]+\033\\[0m\033\\[2m[^\033]+\033\\[0m");
  EXPECT_TRUE(std::regex_search(styled, bold_then_dim)) << styled;
  const std::string plain = raw_pty_output("NO_COLOR=1 TERM=xterm-256color", kTentative);
  EXPECT_FALSE(std::regex_search(plain, kSgr)) << plain;
  EXPECT_TRUE(std::regex_search(plain, kCursorUp)) << plain;
}

TEST_F(LiveViewPty, ShowTentativeNeedsTheLocalAgreementPolicy) {
  auto r = testing::run_gpstream(kDir, "translate -m " + kModel + " --show-tentative --plain < in.txt");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--policy local-agreement"), std::string::npos) << r.err;
}

TEST_F(LiveViewTmux, TentativeWordsLeaveEachSentenceOnce) {
  const std::vector<std::string> tgt = plain_translations("--policy local-agreement");
  ASSERT_EQ(tgt.size(), kSources.size());
  Tmux tmux;
  expect_each_sentence_once(run_in_tmux(tmux, 40, 12, 0, false, {}, kTentative), tgt, 40);
}

}  // namespace
}  // namespace gpstream
