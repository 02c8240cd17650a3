// Fair sharing in the Scheduler (stream/scheduler.h): a session forwards at most max_rows_per_session rows
// per round, so a long source is read in pieces while short streams beside it keep getting their words; and a
// session forwarded in pieces writes exactly what it writes alone, in every paradigm. The scripted CopyModel
// decides from the token ids it sees, so "the same result" is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "copy_model.h"
#include "live_run.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using stream::EventKind;
using stream::Paradigm;
using testing::CharCodec;
using testing::CopyModel;

// Forwards to `inner` and records, for every forward, the rows of each sequence in the batch.
class RowRecorder final : public model::ForwardModel {
 public:
  explicit RowRecorder(model::ForwardModel& inner) : inner_(inner) {}
  const model::ModelConfig& config() const override { return inner_.config(); }
  const model::RopeFrequencies& rope() const override { return inner_.rope(); }
  Status forward(const model::Batch& b, std::span<model::KvCache* const> caches,
                 std::vector<float>& logits) override {
    std::map<int, int> rows;
    for (const auto& t : b.tokens) ++rows[t.seq];
    for (const auto& [seq, n] : rows) {
      max_rows_of_a_sequence = std::max(max_rows_of_a_sequence, n);
      if (rows.size() == 2) max_rows_beside_another[seq] = std::max(max_rows_beside_another[seq], n);
    }
    return inner_.forward(b, caches, logits);
  }
  int max_rows_of_a_sequence = 0;
  // Forwards of exactly two sequences: the most rows of each, by its index in the batch.
  std::map<int, int> max_rows_beside_another;

 private:
  model::ForwardModel& inner_;
};

std::string words_of(const std::string& word, int n, const std::string& last) {
  std::string s;
  for (int i = 0; i < n; ++i) s += word + " ";
  return s + last;
}

// A 200-word sentence read whole before writing (k = 1000) beside two short wait-1 streams, at 8 rows per
// session per round: no forward holds more than 8 rows of one session; the short streams finish before the
// long one writes its first word (its 400+ source rows take at least 50 rounds; the short ones need about a
// dozen) — with the whole sentence in one round, the long stream would write in the second round; and every
// stream writes what it writes alone.
TEST(SchedulerFairness, ALongSourceIsReadInPiecesWhileShortStreamsFinish) {
  CharCodec codec;
  CopyModel copy(codec);
  RowRecorder model(copy);
  const std::vector<std::string> sources = {words_of("ab", 200, "cd"), "the cat sat", "a dog ran"};
  const std::vector<int> ks = {1000, 1, 1};
  stream::Scheduler sched(model, 8);
  std::vector<std::unique_ptr<stream::Session>> sessions;
  for (size_t i = 0; i < sources.size(); ++i) {
    stream::SessionOptions so;
    so.k = ks[i];
    so.max_target_tokens = 1000;
    auto s = stream::Session::create(model, codec, so);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->push_source(sources[i]).ok());
    ASSERT_TRUE((*s)->end_source().ok());
    sessions.push_back(std::move(*s));
    sched.add(sessions.back().get());
  }
  std::vector<std::vector<std::string>> got(sources.size());
  std::vector<int> first_word_round(sources.size(), -1), finished_round(sources.size(), -1);
  int round = 0;
  for (; round < 5000; ++round) {
    auto n = sched.round([&](int h, const stream::Event& e) {
      if (e.kind == EventKind::Word) {
        got[h].push_back(e.word);
        if (first_word_round[h] < 0) first_word_round[h] = round;
      }
      if (e.kind == EventKind::Finished) finished_round[h] = round;
    });
    ASSERT_TRUE(n.ok()) << n.error().message();
    if (*n == 0) break;
  }
  EXPECT_LE(model.max_rows_of_a_sequence, 8);
  EXPECT_GE(first_word_round[0], 50);
  EXPECT_LT(finished_round[1], first_word_round[0]);
  EXPECT_LT(finished_round[2], first_word_round[0]);
  for (size_t i = 0; i < sources.size(); ++i) {
    stream::SessionOptions so;
    so.k = ks[i];
    so.max_target_tokens = 1000;
    EXPECT_EQ(got[i], testing::run_alone(copy, codec, so, sources[i]).words) << i;
    EXPECT_TRUE(sessions[i]->finished()) << i;
  }
  EXPECT_EQ(got[0].size(), 201u);
}

// set_max_rows lowers one session's share only: a 200-word source read whole (k = 1000) capped at 4 rows per
// round never forwards more than 4 rows in a forward, while a second long source beside it, at the
// Scheduler's 32, forwards pieces larger than 4 (its 400+ source rows: 32 at a time); both still write what
// they write alone.
TEST(SchedulerFairness, OneSessionsShareCanBeLoweredAlone) {
  CharCodec codec;
  CopyModel copy(codec);
  RowRecorder model(copy);  // sequence 0 of a two-sequence forward: the capped session (added first)
  const std::string source = words_of("ab", 200, "cd");
  stream::Scheduler sched(model, 32);
  std::vector<std::unique_ptr<stream::Session>> sessions;
  stream::SessionOptions so;
  so.k = 1000;
  so.max_target_tokens = 1000;
  for (int i = 0; i < 2; ++i) {
    auto s = stream::Session::create(model, codec, so);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->push_source(source).ok());
    ASSERT_TRUE((*s)->end_source().ok());
    sessions.push_back(std::move(*s));
  }
  const int capped = sched.add(sessions[0].get());
  sched.add(sessions[1].get());
  sched.set_max_rows(capped, 4);
  std::vector<std::vector<std::string>> got(2);
  for (int round = 0; round < 5000; ++round) {
    auto n = sched.round([&](int h, const stream::Event& e) {
      if (e.kind == EventKind::Word) got[h].push_back(e.word);
    });
    ASSERT_TRUE(n.ok()) << n.error().message();
    if (*n == 0) break;
  }
  EXPECT_EQ(model.max_rows_beside_another[0], 4);
  EXPECT_EQ(model.max_rows_beside_another[1], 32);
  const testing::LiveOutput alone = testing::run_alone(copy, codec, so, source);
  EXPECT_EQ(got[0], alone.words);
  EXPECT_EQ(got[1], alone.words);
}

// Forwarded one, two or five rows at a time, a session writes the words and delays it writes alone, in every
// paradigm (pieces of re-encoded targets, interleaved rows, the prompt and the header included).
TEST(SchedulerFairness, PiecewiseForwardsGiveEveryParadigmItsResultAlone) {
  CharCodec codec;
  CopyModel model(codec);
  const std::string source = "the cat sat on a mat. it was hot";
  for (Paradigm p : {Paradigm::Offline, Paradigm::Group, Paradigm::BatchStream, Paradigm::ReencodePos,
                     Paradigm::Reencode, Paradigm::Interleaved, Paradigm::InterleavedBlocked}) {
    for (int k : {1, 3}) {
      stream::SessionOptions so;
      so.paradigm = p;
      so.k = k;
      so.max_target_tokens = 100;
      const testing::LiveOutput alone = testing::run_alone(model, codec, so, source);
      ASSERT_FALSE(alone.words.empty()) << stream::paradigm_name(p);
      for (int cap : {1, 2, 5}) {
        stream::Scheduler sched(model, cap);
        auto s = stream::Session::create(model, codec, so);
        ASSERT_TRUE(s.ok());
        ASSERT_TRUE((*s)->push_source(source).ok());
        ASSERT_TRUE((*s)->end_source().ok());
        sched.add(s->get());
        testing::LiveOutput got;
        for (int round = 0; round < 5000; ++round) {
          auto n = sched.round([&](int, const stream::Event& e) {
            if (e.kind == EventKind::Word) got.words.push_back(e.word), got.delays.push_back(e.delay);
          });
          ASSERT_TRUE(n.ok()) << n.error().message();
          if (*n == 0) break;
        }
        EXPECT_TRUE((*s)->finished());
        EXPECT_EQ(got.words, alone.words) << stream::paradigm_name(p) << " k=" << k << " cap=" << cap;
        EXPECT_EQ(got.delays, alone.delays) << stream::paradigm_name(p) << " k=" << k << " cap=" << cap;
      }
    }
  }
}

}  // namespace
}  // namespace gpstream
