// Deadline scheduling (see deadline_schedule.h).
#include "serve/deadline_schedule.h"

#include <algorithm>

namespace gpstream::serve {

bool DeadlineSchedule::ahead_of_real_time(const StreamDemand& d, double now_ms) const {
  if (d.audio)
    return d.first_audio_ms >= 0 &&
           d.audio_received_ms - (now_ms - d.first_audio_ms) > policy_.real_time_slack_ms;
  return d.unread_words > policy_.ahead_unread_words;
}

std::vector<StreamShare> DeadlineSchedule::plan(std::span<const StreamDemand> demands, double now_ms) {
  std::vector<StreamShare> shares(demands.size());
  // Due work: a stream that is not ahead forwarded in the last round or has audio to encode.
  bool due_work = false;
  for (size_t i = 0; i < demands.size(); ++i) {
    shares[i].ahead = ahead_of_real_time(demands[i], now_ms);
    if (!shares[i].ahead) due_work |= demands[i].forwarded_last_round || demands[i].audio_waiting;
  }
  const int full_chunks = std::max(1, policy_.encoder_chunks_per_round);
  const int full_rows = std::max(1, policy_.rows_per_round);
  bool ahead_encodes = !due_work;
  if (due_work && ++rounds_since_ahead_encoded_ >= std::max(1, policy_.ahead_encoder_every))
    ahead_encodes = true;
  if (ahead_encodes) rounds_since_ahead_encoded_ = 0;
  for (size_t i = 0; i < demands.size(); ++i) {
    StreamShare& s = shares[i];
    if (!s.ahead) {
      s.encoder_chunks = full_chunks;
      s.max_rows = full_rows;
    } else {
      s.encoder_chunks = ahead_encodes ? 1 : 0;
      s.max_rows = std::clamp(policy_.ahead_rows_per_round, 1, full_rows);
    }
  }
  return shares;
}

}  // namespace gpstream::serve
