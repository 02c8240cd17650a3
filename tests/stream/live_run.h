// A Session stepped live, as SimulEval's text evaluator drives a system: the source pushed one word per
// NeedSource, end_source once the words run out; the words written and their delays collected.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stream/session.h"

namespace gpstream::testing {

struct LiveOutput {
  std::vector<std::string> words;
  std::vector<int> delays;
};

inline LiveOutput run_live(stream::Session& s, const std::string& source) {
  std::vector<std::string> words;
  std::string w;
  for (char c : source + " ") {
    if (c != ' ') {
      w += c;
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  LiveOutput out;
  size_t pushed = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto e = s.step();
    EXPECT_TRUE(e.ok()) << e.error().message();
    if (!e.ok() || e->kind == stream::EventKind::Finished) break;
    if (e->kind == stream::EventKind::NeedSource) {
      if (pushed < words.size())
        EXPECT_TRUE(s.push_source(words[pushed++]).ok());
      else
        EXPECT_TRUE(s.end_source().ok());
    } else if (e->kind == stream::EventKind::Word) {
      out.words.push_back(e->word);
      out.delays.push_back(e->delay);
    }
  }
  return out;
}

}  // namespace gpstream::testing
