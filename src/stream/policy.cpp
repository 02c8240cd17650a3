// wait-k and read-all policies.
#include "stream/policy.h"

#include <algorithm>
#include <climits>

namespace gpstream::stream {

Action WaitKPolicy::decide(const PolicyState& s) const {
  // Units wanted before the next word: k + words written, capped at M + 1 once M is known.
  long want = static_cast<long>(k_) + s.words_written;
  if (s.end_chosen_at >= 0 && end_after_source_) want = std::max<long>(want, s.end_chosen_at + 1L);
  if (s.source_finished) want = std::min<long>(want, s.n_words + 1);
  return s.units_read < want ? Action::Read : Action::Write;
}

Action ReadAllPolicy::decide(const PolicyState& s) const {
  if (!s.source_finished) return Action::Read;
  return s.units_read < s.n_words + 1 ? Action::Read : Action::Write;
}

}  // namespace gpstream::stream
