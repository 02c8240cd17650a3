// The simultaneous evaluator: drives a streaming Session over a test set exactly as SimulEval's text
// evaluator does — one source word pushed per request for more source — and records per target word
// its delay (source words read) and its emission time. With a speaking pace of W words/s (metrics.md
// §A.10) time is virtual: source word i arrives at i·1000/W ms, the clock runs with real compute time
// in between, and delays/elapsed/source_length are in ms; without a pace every word is there at once
// and `elapsed` holds the compute time (ms) at which each word was written.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "eval/instance_log.h"
#include "stream/session.h"

namespace gpstream::eval {

struct TestPair {
  std::string source;
  std::string reference;
};

// Reads "source<TAB>reference" lines (a missing TAB is an error naming the line).
Result<std::vector<TestPair>> read_test_tsv(const std::string& path);
// Reads parallel files (line counts must match).
Result<std::vector<TestPair>> read_test_files(const std::string& source, const std::string& reference);

struct SimultaneousOptions {
  double pace_words_per_s = 0;  // 0: no pace
  // Every word of the line is read: a continuous session translates all its sentences and the words of a
  // sentence the model ended early (stream/session.h); delays count the line's words. false: SimulEval's
  // own protocol (its remote agent), where the instance ends at the model's first end marker.
  bool read_whole_line = true;
  // Called with (words pushed, words in the line) after each push (long lines: the talks of eval
  // --long-form).
  std::function<void(size_t, size_t)> progress;
};

// Runs one sentence; returns its SimulEval record (index set by the caller).
Result<InstanceRecord> evaluate_sentence(model::ForwardModel& model, const stream::SegmentCodec& codec,
                                         const stream::SessionOptions& session_options, const TestPair& pair,
                                         const SimultaneousOptions& options);

// Runs every pair; progress(done, total) after each sentence.
Result<std::vector<InstanceRecord>> evaluate_corpus(model::ForwardModel& model,
                                                    const stream::SegmentCodec& codec,
                                                    const stream::SessionOptions& session_options,
                                                    const std::vector<TestPair>& pairs,
                                                    const SimultaneousOptions& options,
                                                    const std::function<void(size_t, size_t)>& progress = {});

}  // namespace gpstream::eval
