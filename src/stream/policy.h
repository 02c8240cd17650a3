// Read/write policies. A Policy looks at a stream's state and says READ (take one more source unit) or
// WRITE (produce target text); it holds no stream state, so one policy object serves many sessions.
// wait-k (Ma et al., 2019) is the first; adaptive policies implement the same interface.
#pragma once

#include <memory>

namespace gpstream::stream {

enum class Action { Read, Write };

struct PolicyState {
  int units_read = 0;     // source units in the cache (words, then the end marker as unit M+1)
  int words_written = 0;  // target words emitted so far
  bool source_finished = false;
  int n_words = 0;  // source words known so far (= M once source_finished)
  // The decision is for the target end marker: the model chose EOS with this many units read (collect
  // reads advances units_read, not this); -1: for a word.
  int end_chosen_at = -1;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Action decide(const PolicyState& s) const = 0;
};

// wait-k: target word j is written after min(k + j − 1, M + 1) units (gpe.md §4), the end marker after
// min(k + N, M + 1) — or, with end_after_source, only after all M + 1 (a transcript ends with the audio:
// with audio chunks as units, N words and M chunks are on different scales, and k + N < M + 1 lets the model
// end before it has heard the last words). Then every end marker chosen early reads one more unit and lets
// the model decide again, so a model that goes on writing does so with wait-k's lag, not the whole rest.
class WaitKPolicy final : public Policy {
 public:
  explicit WaitKPolicy(int k, bool end_after_source = false) : k_(k), end_after_source_(end_after_source) {}
  Action decide(const PolicyState& s) const override;
  int k() const { return k_; }

 private:
  int k_;
  bool end_after_source_;
};

// Reads the whole source (with its end marker) before writing: offline translation.
class ReadAllPolicy final : public Policy {
 public:
  Action decide(const PolicyState& s) const override;
};

}  // namespace gpstream::stream
