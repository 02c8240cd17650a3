// The policy tests' hand-made states: a stream's progress (units read, words written, whether the source has
// finished and how many words it has), to which each test adds the signal its policy reads.
#pragma once

#include "stream/policy.h"

namespace gpstream::stream {

inline PolicyState progress_state(int units, int written, bool finished, int n_words) {
  PolicyState s;
  s.units_read = units;
  s.words_written = written;
  s.source_finished = finished;
  s.n_words = n_words;
  return s;
}

}  // namespace gpstream::stream
