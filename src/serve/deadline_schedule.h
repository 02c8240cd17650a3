// Deadline scheduling of the engine's rounds: which streams' work is due now, and how much of a round the
// others may take. A stream is *ahead of real time* when its input arrives faster than it is spoken or
// read: audio sent more than real_time_slack_ms ahead of the time since its first samples, or (text) more
// than ahead_unread_words words waiting unread. Its work is not due yet, so it forwards at most
// ahead_rows_per_round rows per round and encodes one chunk per round — only every ahead_encoder_every-th
// round while another stream has work. A round is never preempted, so its size is what a stream whose
// work falls due during it waits for: a round carries, per ahead stream, at most ahead_rows_per_round rows
// and one encoder chunk, whatever that stream sent, and while other streams have work the chunk comes one
// round in ahead_encoder_every.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpstream::serve {

struct DeadlinePolicy {
  double real_time_slack_ms = 2000;
  int64_t ahead_unread_words = 64;
  int ahead_rows_per_round = 16;
  int ahead_encoder_every = 4;
  // The full rates: encoder chunks per stream per round, rows per stream per round.
  int encoder_chunks_per_round = 4;
  int rows_per_round = 64;
};

// What one stream has and had to do, as the engine sees it before a round.
struct StreamDemand {
  bool audio = false;
  double first_audio_ms = -1;    // arrival of its first samples (audio; < 0: none yet)
  double audio_received_ms = 0;  // audio received so far (audio)
  int64_t unread_words = 0;      // words received and not yet read by its session (text)
  bool audio_waiting = false;    // audio waiting for the encoder
  bool forwarded_last_round = false;
};

// Its share of the next round.
struct StreamShare {
  bool ahead = false;
  int encoder_chunks = 0;  // encoder chunks' worth of its waiting audio to encode now
  int max_rows = 0;        // rows it may forward (Scheduler::set_max_rows)
};

class DeadlineSchedule {
 public:
  explicit DeadlineSchedule(DeadlinePolicy policy) : policy_(policy) {}

  bool ahead_of_real_time(const StreamDemand& d, double now_ms) const;
  // The shares of the next round, one per demand, in order.
  std::vector<StreamShare> plan(std::span<const StreamDemand> demands, double now_ms);

  const DeadlinePolicy& policy() const { return policy_; }

 private:
  DeadlinePolicy policy_;
  int rounds_since_ahead_encoded_ = 0;
};

}  // namespace gpstream::serve
