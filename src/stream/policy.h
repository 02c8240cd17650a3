// Read/write policies. A Policy looks at a stream's state and says READ (take one more source unit) or
// WRITE (produce target text); it holds no stream state, so one policy object serves many sessions.
// wait-k (Ma et al., 2019) is the first; adaptive policies implement the same interface.
#pragma once

#include <memory>

namespace gpstream::stream {

enum class Action { Read, Write };

struct PolicyState {
  int units_read = 0;        // source units in the cache (words, then the end marker as unit M+1)
  int words_written = 0;     // target words emitted so far
  bool source_finished = false;
  int n_words = 0;           // source words known so far (= M once source_finished)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Action decide(const PolicyState& s) const = 0;
};

// wait-k: target word j is written after min(k + j − 1, M + 1) units (gpe.md §4).
class WaitKPolicy final : public Policy {
 public:
  explicit WaitKPolicy(int k) : k_(k) {}
  Action decide(const PolicyState& s) const override;
  int k() const { return k_; }

 private:
  int k_;
};

// Reads the whole source (with its end marker) before writing: offline translation.
class ReadAllPolicy final : public Policy {
 public:
  Action decide(const PolicyState& s) const override;
};

}  // namespace gpstream::stream
