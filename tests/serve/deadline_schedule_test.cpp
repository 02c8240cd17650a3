// Deadline scheduling (serve/deadline_schedule.h): which streams are ahead of real time, and the shares of
// a round, checked against values worked out by hand from the policy's rules.
#include "serve/deadline_schedule.h"

#include <gtest/gtest.h>

namespace gpstream::serve {
namespace {

StreamDemand audio_stream(double first_ms, double received_ms, bool waiting) {
  StreamDemand d;
  d.audio = true;
  d.first_audio_ms = first_ms;
  d.audio_received_ms = received_ms;
  d.audio_waiting = waiting;
  return d;
}

TEST(DeadlineSchedule, AudioIsAheadOnlyPastTheSlackBeyondRealTime) {
  const DeadlineSchedule ds(DeadlinePolicy{});  // slack 2000 ms
  // First samples at t = 1000 ms; at t = 11000 ms, 10 s of real time have passed.
  EXPECT_FALSE(ds.ahead_of_real_time(audio_stream(1000, 10000, false), 11000));
  EXPECT_FALSE(ds.ahead_of_real_time(audio_stream(1000, 12000, false), 11000));  // exactly the slack
  EXPECT_TRUE(ds.ahead_of_real_time(audio_stream(1000, 12001, false), 11000));
  // A stream behind real time (the encoder or the client is slow) is never ahead.
  EXPECT_FALSE(ds.ahead_of_real_time(audio_stream(1000, 3000, true), 11000));
  // No audio yet.
  EXPECT_FALSE(ds.ahead_of_real_time(audio_stream(-1, 0, false), 11000));
}

TEST(DeadlineSchedule, TextIsAheadPastItsUnreadWords) {
  const DeadlineSchedule ds(DeadlinePolicy{});  // 64 unread words
  StreamDemand d;
  d.unread_words = 64;
  EXPECT_FALSE(ds.ahead_of_real_time(d, 0));
  d.unread_words = 65;
  EXPECT_TRUE(ds.ahead_of_real_time(d, 0));
}

TEST(DeadlineSchedule, AloneAnAheadStreamEncodesAChunkEveryRound) {
  DeadlineSchedule ds(DeadlinePolicy{});
  // 120 s sent within the first second: far ahead; nothing else has work. Its rounds stay small (a stream
  // whose work falls due waits for the round under way): one chunk and 16 rows each.
  const std::vector<StreamDemand> d = {audio_stream(0, 120000, true)};
  for (int round = 0; round < 6; ++round) {
    const auto shares = ds.plan(d, 1000 + round);
    ASSERT_EQ(shares.size(), 1u);
    EXPECT_TRUE(shares[0].ahead);
    EXPECT_EQ(shares[0].encoder_chunks, 1);
    EXPECT_EQ(shares[0].max_rows, 16);
  }
}

TEST(DeadlineSchedule, BesideDueWorkAnAheadStreamGetsOneChunkEveryFourthRoundAndSixteenRows) {
  DeadlineSchedule ds(DeadlinePolicy{});
  StreamDemand realtime = audio_stream(0, 1000, true);  // 1 s sent after 1 s: due
  const std::vector<StreamDemand> d = {audio_stream(0, 120000, true), realtime};
  // Rounds 1, 2, 3: no encoding for the ahead stream; round 4: one chunk; then again every fourth.
  const int want_chunks[] = {0, 0, 0, 1, 0, 0, 0, 1};
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round + 1));
    const auto shares = ds.plan(d, 1000);
    EXPECT_TRUE(shares[0].ahead);
    EXPECT_EQ(shares[0].encoder_chunks, want_chunks[round]);
    EXPECT_EQ(shares[0].max_rows, 16);
    EXPECT_FALSE(shares[1].ahead);
    EXPECT_EQ(shares[1].encoder_chunks, 4);
    EXPECT_EQ(shares[1].max_rows, 64);
  }
}

TEST(DeadlineSchedule, DueWorkIsAForwardLastRoundOrWaitingAudioOfAStreamThatIsNotAhead) {
  DeadlineSchedule ds(DeadlinePolicy{});
  StreamDemand text;  // a text stream at its pace: 3 unread words
  text.unread_words = 3;
  StreamDemand fast;  // a text stream far ahead: 1,500 words unread
  fast.unread_words = 1500;
  fast.forwarded_last_round = true;  // an ahead stream's own work does not make work due
  fast.audio_waiting = false;
  // No due work: the ahead stream's chunk comes every round.
  for (int round = 0; round < 3; ++round) {
    const auto shares = ds.plan(std::vector<StreamDemand>{fast, text}, 0);
    EXPECT_EQ(shares[0].encoder_chunks, 1);
    EXPECT_EQ(shares[0].max_rows, 16);
    EXPECT_EQ(shares[1].max_rows, 64);
  }
  // The text stream forwarded: its work is due, so the ahead stream's chunk waits for every 4th round.
  text.forwarded_last_round = true;
  const int want_chunks[] = {0, 0, 0, 1};
  for (int round = 0; round < 4; ++round) {
    const auto shares = ds.plan(std::vector<StreamDemand>{fast, text}, 0);
    EXPECT_EQ(shares[0].encoder_chunks, want_chunks[round]);
    EXPECT_EQ(shares[0].max_rows, 16);
  }
}

TEST(DeadlineSchedule, ThePolicyValuesAreHonoured) {
  DeadlinePolicy p;
  p.real_time_slack_ms = 500;
  p.ahead_rows_per_round = 8;
  p.ahead_encoder_every = 2;
  p.encoder_chunks_per_round = 3;
  p.rows_per_round = 32;
  DeadlineSchedule ds(p);
  const std::vector<StreamDemand> d = {audio_stream(0, 1600, false), audio_stream(0, 1400, true)};
  // At t = 1000: the first is 600 ms ahead (> 500), the second 400 ms (not ahead).
  const int want_chunks[] = {0, 1, 0, 1};
  for (int round = 0; round < 4; ++round) {
    const auto shares = ds.plan(d, 1000);
    EXPECT_TRUE(shares[0].ahead);
    EXPECT_EQ(shares[0].encoder_chunks, want_chunks[round]);
    EXPECT_EQ(shares[0].max_rows, 8);
    EXPECT_FALSE(shares[1].ahead);
    EXPECT_EQ(shares[1].encoder_chunks, 3);
    EXPECT_EQ(shares[1].max_rows, 32);
  }
}

}  // namespace
}  // namespace gpstream::serve
