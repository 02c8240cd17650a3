// A Session stepped live, as SimulEval's text evaluator drives a system: the source pushed one word per
// NeedSource, end_source once the words run out; the words written and their delays collected. Also: the
// same for sessions stepped together by a Scheduler, and a session run alone with its whole source at once.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stream/scheduler.h"
#include "stream/session.h"

namespace gpstream::testing {

struct LiveOutput {
  std::vector<std::string> words;
  std::vector<int> delays;
};

// The words of a test source (split on spaces; the test sources have no other whitespace).
inline std::vector<std::string> split_on_spaces(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  for (char c : text + " ") {
    if (c != ' ') {
      w += c;
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  return words;
}

// Steps s until Finished (at most max_steps steps), pushing the next of `words` at each NeedSource and
// end_source once they run out; every other event but Finished goes to on_event.
inline void drive_live(stream::Session& s, const std::vector<std::string>& words,
                       const std::function<void(const stream::Event&)>& on_event, int max_steps = 10000) {
  size_t pushed = 0;
  for (int guard = 0; guard < max_steps; ++guard) {
    auto e = s.step();
    EXPECT_TRUE(e.ok()) << e.error().message();
    if (!e.ok() || e->kind == stream::EventKind::Finished) return;
    if (e->kind == stream::EventKind::NeedSource) {
      if (pushed < words.size())
        EXPECT_TRUE(s.push_source(words[pushed++]).ok());
      else
        EXPECT_TRUE(s.end_source().ok());
    } else {
      on_event(*e);
    }
  }
}

inline LiveOutput run_live(stream::Session& s, const std::string& source) {
  LiveOutput out;
  drive_live(s, split_on_spaces(source), [&](const stream::Event& e) {
    if (e.kind != stream::EventKind::Word) return;
    out.words.push_back(e.word);
    out.delays.push_back(e.delay);
  });
  return out;
}

// Runs the Scheduler's rounds until no session has work left; the words and delays written per handle.
inline std::vector<LiveOutput> run_scheduler(stream::Scheduler& sched, size_t n_sessions) {
  std::vector<LiveOutput> got(n_sessions);
  for (int guard = 0; guard < 1000; ++guard) {
    auto n = sched.round([&](int h, const stream::Event& e) {
      if (e.kind == stream::EventKind::Word) got[h].words.push_back(e.word), got[h].delays.push_back(e.delay);
    });
    EXPECT_TRUE(n.ok()) << n.error().message();
    if (!n.ok() || *n == 0) break;
  }
  return got;
}

// A fresh session with these options, given its whole source and its end at once, stepped alone.
inline LiveOutput run_alone(model::ForwardModel& model, const stream::SegmentCodec& codec,
                            const stream::SessionOptions& options, const std::string& source) {
  auto s = stream::Session::create(model, codec, options);
  EXPECT_TRUE(s.ok());
  if (!s.ok()) return {};
  EXPECT_TRUE((*s)->push_source(source).ok());
  EXPECT_TRUE((*s)->end_source().ok());
  return run_live(**s, "");
}

// Sessions of these options over these sources (each given its whole source and its end at once), batched
// by one Scheduler: expects each to finish and to write what it writes run alone, words and delays; returns
// what they wrote.
inline std::vector<LiveOutput> expect_batched_equals_alone(model::ForwardModel& model,
                                                           const stream::SegmentCodec& codec,
                                                           const std::vector<stream::SessionOptions>& options,
                                                           const std::vector<std::string>& sources) {
  std::vector<std::unique_ptr<stream::Session>> sessions;
  stream::Scheduler sched(model);
  for (size_t i = 0; i < sources.size(); ++i) {
    auto s = stream::Session::create(model, codec, options[i]);
    EXPECT_TRUE(s.ok()) << i << ": " << s.error().message();
    if (!s.ok()) return {};
    sessions.push_back(std::move(s).value());
    EXPECT_TRUE(sessions.back()->push_source(sources[i]).ok());
    EXPECT_TRUE(sessions.back()->end_source().ok());
    EXPECT_EQ(sched.add(sessions.back().get()), static_cast<int>(i));
  }
  const std::vector<LiveOutput> got = run_scheduler(sched, sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    EXPECT_TRUE(sessions[i]->finished()) << i;
    const LiveOutput want = run_alone(model, codec, sessions[i]->options(), sources[i]);
    EXPECT_EQ(got[i].words, want.words) << i;
    EXPECT_EQ(got[i].delays, want.delays) << i;
  }
  return got;
}

}  // namespace gpstream::testing
