// Sessions with audio source units beyond the layout invariants: continuous audio streams cut by
// end_segment (gpe.md §8.5: each segment equals a fresh Session), the Scheduler batching audio and text
// sessions into one forward (equal to each run alone), reencode over audio rows (§8.4: every logit equals
// a plain causal forward), and bad input: each refusal is a clear error that leaves the session unchanged.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "../model/tiny_models.h"
#include "../testing/forward_bounds.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using model::Group;
using stream::EventKind;
using stream::Paradigm;
using testing::CharCodec;

// One utterance: its chunks' rows (n_embd floats each).
using Utterance = std::vector<std::vector<float>>;

Utterance random_utterance(const std::vector<int>& chunk_rows, int width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  Utterance u;
  for (int n : chunk_rows) {
    u.emplace_back(static_cast<size_t>(n) * width);
    for (float& v : u.back()) v = normal(rng);
  }
  return u;
}

struct Output {
  std::vector<std::vector<std::string>> segments{1};
  std::vector<int> delays;
  bool finished = false;
  int max_source_rows = 0;
};

// Steps a session, pushing one chunk per NeedSource; after each utterance's last chunk calls end_segment
// (continuous sessions), after the last utterance end_source.
Output run_live(stream::Session& s, const std::vector<Utterance>& utterances, int width) {
  Output out;
  size_t u = 0, c = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto e = s.step();
    EXPECT_TRUE(e.ok()) << e.error().message();
    if (!e.ok()) break;
    out.max_source_rows = std::max(out.max_source_rows, s.cache().rows(Group::Source));
    if (e->kind == EventKind::NeedSource) {
      if (u < utterances.size()) {
        EXPECT_TRUE(s.push_source_embeddings(utterances[u][c], width, 80.0).ok());
        if (++c == utterances[u].size()) {
          if (s.options().continuous) {
            EXPECT_TRUE(s.end_segment().ok());
          }
          ++u, c = 0;
        }
      } else {
        EXPECT_TRUE(s.end_source().ok());
      }
    } else if (e->kind == EventKind::Word) {
      out.segments.back().push_back(e->word);
      out.delays.push_back(e->delay);
    } else if (e->kind == EventKind::SegmentEnd) {
      out.segments.emplace_back();
    } else if (e->kind == EventKind::Finished) {
      out.finished = true;
      break;
    }
  }
  return out;
}

model::ModelConfig codec_config(model::ModelConfig cfg) {
  cfg.n_vocab = CharCodec().vocab_size();  // every id decodes, so random models write words
  return cfg;
}

// gpe.md §8.5 as for text (session_behaviour_test.cpp): the whole stream is pushed first, utterances cut
// by end_segment. A segment that ends — EOS or the target limit — before reading its last chunk leaves the
// remaining chunks to a fresh segment, as with text (and as when the chunks arrive live).
TEST(AudioContinuousStream, EachSegmentEqualsAFreshSession) {
  CharCodec codec;
  for (auto cfg :
       {codec_config(testing::tiny_config(false, true, false)), codec_config(testing::tiny_gemma2_config(3)),
        codec_config(testing::tiny_phi3_config(3))}) {
    SCOPED_TRACE(cfg.model_type);
    const int E = cfg.n_embd;
    const std::vector<Utterance> utterances = {random_utterance({2, 1, 3}, E, 1),
                                               random_utterance({1, 2}, E, 2),
                                               random_utterance({3, 1, 1, 2}, E, 3)};
    // A random model may write nothing; take the first seed whose segments hold words.
    bool compared_words = false;
    for (uint64_t seed = 8; seed < 30 && !compared_words; ++seed) {
      auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(seed)), 1);
      stream::SessionOptions so;
      so.k = 2;
      so.max_target_tokens = 10;
      so.continuous = true;
      auto cont = stream::Session::create(*tf, codec, so);
      ASSERT_TRUE(cont.ok());
      for (const Utterance& u : utterances) {
        for (const auto& chunk : u) ASSERT_TRUE((*cont)->push_source_embeddings(chunk, E, 80.0).ok());
        ASSERT_TRUE((*cont)->end_segment().ok());
      }
      ASSERT_TRUE((*cont)->end_source().ok());
      const Output all = run_live(**cont, {}, E);
      ASSERT_TRUE(all.finished);
      EXPECT_EQ((*cont)->stream_words_read(), 3 + 2 + 4);  // every chunk of the three utterances
      EXPECT_LE(all.max_source_rows,
                1 + 7 + 1);  // prompt + the longest utterance + end marker, not the stream
      // Expected independently: each utterance alone in a fresh session, and the chunks such a session left
      // unread (its model ended early, or ran out of target tokens) again in a fresh session, until every
      // chunk is read; every segment ends with SegmentEnd, the stream with Finished: one empty tail.
      std::vector<std::vector<std::string>> expected;
      for (const Utterance& u : utterances) {
        for (size_t from = 0; from < u.size();) {
          stream::SessionOptions fo = so;
          fo.continuous = false;
          auto fresh = stream::Session::create(*tf, codec, fo);
          ASSERT_TRUE(fresh.ok());
          const Output alone =
              run_live(**fresh, {Utterance(u.begin() + static_cast<std::ptrdiff_t>(from), u.end())}, E);
          expected.push_back(alone.segments[0]);
          compared_words = compared_words || !alone.segments[0].empty();
          ASSERT_GE((*fresh)->words_read(), 1);
          from += static_cast<size_t>((*fresh)->words_read());
        }
      }
      expected.emplace_back();
      EXPECT_EQ(all.segments, expected);
    }
    EXPECT_TRUE(compared_words);
  }
}

// The utterance and its end_segment pushed first, end_source only once the session asks for more (its
// segment has ended): the stream finishes without decoding an empty segment (no words from no audio).
TEST(AudioContinuousStream, EndSourceAfterASegmentEndDecodesNoEmptySegment) {
  CharCodec codec;
  const auto cfg = codec_config(testing::tiny_config(false, true, false));
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(8)), 1);
  const int E = cfg.n_embd;
  stream::SessionOptions so;
  so.k = 1;
  so.max_target_tokens = 6;
  so.continuous = true;
  auto s = std::move(stream::Session::create(*tf, codec, so)).value();
  for (const auto& chunk : random_utterance({1, 2}, E, 5))
    ASSERT_TRUE(s->push_source_embeddings(chunk, E).ok());
  ASSERT_TRUE(s->end_segment().ok());
  const Output out = run_live(*s, {}, E);  // calls end_source at the first NeedSource
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.segments.size(), 2u);  // one SegmentEnd; an empty segment would add a second
  EXPECT_TRUE(out.segments.back().empty());
}

TEST(AudioScheduler, BatchedAudioAndTextSessionsEqualSessionsRunAlone) {
  CharCodec codec;
  const auto cfg = codec_config(testing::tiny_config(true, false, false));
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(4)), 2);
  const int E = cfg.n_embd;
  struct Spec {
    Paradigm paradigm;
    int k;
    Utterance audio;  // empty: a text session
  };
  const std::vector<Spec> specs = {{Paradigm::Group, 1, random_utterance({2, 1, 2}, E, 11)},
                                   {Paradigm::Interleaved, 2, random_utterance({1, 3}, E, 12)},
                                   {Paradigm::Group, 1, {}},
                                   {Paradigm::Reencode, 1, random_utterance({1, 1, 1, 2}, E, 13)},
                                   {Paradigm::BatchStream, 2, random_utterance({4, 2}, E, 14)}};
  auto make = [&](const Spec& sp) {
    stream::SessionOptions so;
    so.paradigm = sp.paradigm;
    so.k = sp.k;
    so.max_target_tokens = 8;
    auto s = std::move(stream::Session::create(*tf, codec, so)).value();
    if (sp.audio.empty()) {
      EXPECT_TRUE(s->push_source("one two three").ok());
    }
    for (const auto& chunk : sp.audio) EXPECT_TRUE(s->push_source_embeddings(chunk, E, 40.0).ok());
    EXPECT_TRUE(s->end_source().ok());
    return s;
  };
  std::vector<std::unique_ptr<stream::Session>> sessions;
  stream::Scheduler sched(*tf);
  std::vector<std::vector<std::string>> got(specs.size());
  std::vector<std::vector<double>> got_ms(specs.size());
  for (const Spec& sp : specs) {
    sessions.push_back(make(sp));
    sched.add(sessions.back().get());
  }
  for (int guard = 0; guard < 1000; ++guard) {
    auto n = sched.round([&](int h, const stream::Event& e) {
      if (e.kind == EventKind::Word) got[h].push_back(e.word), got_ms[h].push_back(e.delay_ms);
    });
    ASSERT_TRUE(n.ok()) << n.error().message();
    if (*n == 0) break;
  }
  bool any_words = false;
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_TRUE(sessions[i]->finished()) << i;
    auto alone = make(specs[i]);
    std::vector<std::string> want;
    std::vector<double> want_ms;
    for (int guard = 0; guard < 1000; ++guard) {
      auto e = alone->step();
      ASSERT_TRUE(e.ok());
      if (e->kind == EventKind::Word) want.push_back(e->word), want_ms.push_back(e->delay_ms);
      if (e->kind == EventKind::Finished) break;
    }
    EXPECT_EQ(got[i], want) << i;
    EXPECT_EQ(got_ms[i], want_ms) << i;
    any_words = any_words || !want.empty();
  }
  EXPECT_TRUE(any_words);
}

// Around each forward of a reencode session over audio, checks the logits against one plain causal forward
// of every row in the cache (source rows, then target rows, consecutive positions), audio rows included.
class AudioReencodeChecker final : public model::ForwardModel {
 public:
  explicit AudioReencodeChecker(model::Transformer& tf) : tf_(tf) {}
  const model::ModelConfig& config() const override { return tf_.config(); }
  const model::RopeFrequencies& rope() const override { return tf_.rope(); }
  Status forward(const model::Batch& b, std::span<model::KvCache* const> caches,
                 std::vector<float>& logits) override {
    GPS_TRY(tf_.forward(b, caches, logits));
    auto& c = *caches[0];
    const size_t E = static_cast<size_t>(tf_.config().n_embd);
    for (int g = 0; g < 2; ++g) {
      int in_batch = 0;
      for (const auto& t : b.tokens) in_batch += static_cast<int>(t.group) == g;
      rows_[g].resize(static_cast<size_t>(c.rows(static_cast<Group>(g)) - in_batch));  // truncations
    }
    for (const auto& t : b.tokens) {
      Row r{t.id, {}};
      if (t.embedding >= 0)
        r.input.assign(b.embeddings.begin() + t.embedding * E, b.embeddings.begin() + (t.embedding + 1) * E);
      rows_[static_cast<int>(t.group)].push_back(std::move(r));
    }
    if (logits.empty()) return {};
    model::KvCache fresh(tf_.config());
    model::Batch plain;
    int pos = 0;
    for (int g = 0; g < 2; ++g)
      for (const Row& r : rows_[g]) {
        if (r.input.empty())
          plain.add({.id = r.id, .pos = static_cast<float>(pos), .group = Group::Source, .n_src = pos + 1});
        else
          plain.add_embedded(r.input,
                             {.pos = static_cast<float>(pos), .group = Group::Source, .n_src = pos + 1});
        ++pos;
        audio_rows += !r.input.empty() && g == 0;
      }
    plain.tokens.back().logits = true;
    std::vector<float> want;
    GPS_TRY(tf_.forward(plain, fresh, want));
    for (size_t i = 0; i < want.size(); ++i)
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(want[i] - logits[i])));
    ++checked;
    return {};
  }
  double max_diff = 0;
  int checked = 0;
  int64_t audio_rows = 0;  // audio rows seen by the plain forwards (they must take part)

 private:
  struct Row {
    int32_t id;
    std::vector<float> input;
  };
  model::Transformer& tf_;
  std::array<std::vector<Row>, 2> rows_;
};

TEST(AudioReencode, EveryLogitEqualsAPlainCausalForward) {
  CharCodec codec;
  const auto cfg = codec_config(testing::tiny_config(false, false, true));
  const Utterance audio = random_utterance({2, 1, 3, 1}, cfg.n_embd, 21);
  bool found = false;
  for (uint64_t seed = 12; seed < 40 && !found; ++seed) {  // a seed that writes a few tokens
    auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(seed)), 1);
    AudioReencodeChecker checker(*tf);
    stream::SessionOptions so;
    so.paradigm = Paradigm::Reencode;
    so.k = 1;
    so.max_target_tokens = 12;
    auto s = stream::Session::create(checker, codec, so);
    ASSERT_TRUE(s.ok());
    run_live(**s, {audio}, cfg.n_embd);
    if (checker.checked <= 3) continue;
    // Two fp32 forwards of the same rows in other batches: forward_order_bound (testing/forward_bounds.h).
    EXPECT_LE(checker.max_diff, testing::forward_order_bound(cfg, tf->weights()).logits);
    EXPECT_GT(checker.audio_rows, 0);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(AudioInput, BadChunksAreRefusedAndLeaveTheSessionUnchanged) {
  CharCodec codec;
  const auto cfg = codec_config(testing::tiny_config(false, true, false));
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(9)), 1);
  const int E = cfg.n_embd;
  const Utterance audio = random_utterance({2, 3}, E, 31);
  stream::SessionOptions so;
  so.k = 1;
  so.max_target_tokens = 8;
  so.max_cache_rows = 64;
  auto clean = stream::Session::create(*tf, codec, so);
  const Output want = run_live(**clean, {audio}, E);

  auto s = std::move(stream::Session::create(*tf, codec, so)).value();
  auto refused = [&](Status st, const std::string& says) {
    ASSERT_FALSE(st.ok()) << says;
    EXPECT_NE(st.error().message().find(says), std::string::npos) << st.error().message();
  };
  const std::vector<float> narrow(static_cast<size_t>(E - 1) * 2, 0.1f);
  refused(s->push_source_embeddings(narrow, E - 1), "rows of 31 floats, the model's n_embd is 32");
  refused(s->push_source_embeddings({}, E), "no rows");
  refused(s->push_source_embeddings(std::span<const float>(audio[0]).first(static_cast<size_t>(E) + 3), E),
          "not a whole number of rows");
  std::vector<float> bad = audio[0];
  bad[static_cast<size_t>(E) + 5] = std::numeric_limits<float>::quiet_NaN();
  refused(s->push_source_embeddings(bad, E), "non-finite value in row 1");
  bad[static_cast<size_t>(E) + 5] = std::numeric_limits<float>::infinity();
  refused(s->push_source_embeddings(bad, E), "non-finite value in row 1");
  refused(s->push_source_embeddings(audio[0], E, -1.0), "duration");
  refused(s->push_source_embeddings(audio[0], E, std::nan("")), "duration");
  refused(s->push_source_embeddings(std::vector<float>(static_cast<size_t>(E) * 65, 0.0f), E),
          "max_cache_rows");
  refused(s->end_segment(), "only continuous streams");
  // One kind of source per session: audio after text and text after audio are refused.
  ASSERT_TRUE(s->push_source("").ok());  // no words: not a text source yet
  {
    auto text = std::move(stream::Session::create(*tf, codec, so)).value();
    ASSERT_TRUE(text->push_source("hello").ok());
    refused(text->push_source_embeddings(audio[0], E), "source is text words");
  }
  // None of that changed the session: it runs exactly like the clean one.
  Output got;
  bool ended = false;
  {
    size_t c = 0;
    for (int guard = 0; guard < 1000; ++guard) {
      auto e = s->step();
      ASSERT_TRUE(e.ok()) << e.error().message();
      if (e->kind == EventKind::NeedSource) {
        if (c < audio.size()) {
          ASSERT_TRUE(s->push_source_embeddings(audio[c++], E, 80.0).ok());
          refused(s->push_source("words"), "source is audio");
        } else {
          ASSERT_TRUE(s->end_source().ok());
          ended = true;
        }
      } else if (e->kind == EventKind::Word) {
        got.segments.back().push_back(e->word);
        got.delays.push_back(e->delay);
      } else if (e->kind == EventKind::Finished) {
        break;
      }
    }
  }
  EXPECT_EQ(got.segments, want.segments);
  EXPECT_EQ(got.delays, want.delays);
  EXPECT_EQ(s->stats().source_tokens, (*clean)->stats().source_tokens);
  // After end_source (called here if the session finished first): pushes and a second end are refused.
  if (!ended) {
    ASSERT_TRUE(s->end_source().ok());
  }
  refused(s->push_source_embeddings(audio[0], E), "after end_source");
  EXPECT_FALSE(s->end_source().ok());
}

TEST(AudioInput, EndSegmentNeedsAUnitSinceTheLastSegmentEnd) {
  CharCodec codec;
  const auto cfg = codec_config(testing::tiny_config(false, true, false));
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(9)), 1);
  const int E = cfg.n_embd;
  const Utterance audio = random_utterance({1, 1, 1}, E, 41);
  stream::SessionOptions so;
  so.continuous = true;
  auto s = std::move(stream::Session::create(*tf, codec, so)).value();
  EXPECT_FALSE(s->end_segment().ok());  // nothing pushed
  ASSERT_TRUE(s->push_source_embeddings(audio[0], E).ok());
  ASSERT_TRUE(s->end_segment().ok());
  EXPECT_FALSE(s->end_segment().ok());                       // twice in a row
  ASSERT_TRUE(s->push_source_embeddings(audio[1], E).ok());  // queued for the next segment
  ASSERT_TRUE(s->end_segment().ok());
  EXPECT_FALSE(s->end_segment().ok());
  ASSERT_TRUE(s->push_source_embeddings(audio[2], E).ok());
  ASSERT_TRUE(s->end_source().ok());
  EXPECT_FALSE(s->end_segment().ok());  // after end_source
  // Three segments (the last ended by end_source).
  int segment_ends = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    auto e = s->step();
    ASSERT_TRUE(e.ok());
    ASSERT_NE(e->kind, EventKind::NeedSource);
    segment_ends += e->kind == EventKind::SegmentEnd;
    if (e->kind == EventKind::Finished) break;
  }
  EXPECT_EQ(segment_ends, 3);
}

}  // namespace
}  // namespace gpstream
