// The Session's word beam search (SessionOptions::beam): with a model whose next-token distribution is a
// pseudo-random function of the target prefix, every word a beam-searching Session writes is the best whole
// word by brute force (word_beam_oracle.h), sentence after sentence; with the scripted copy model (one
// obvious word at a time) beam and greedy write the same words with the same delays; a beam runs through
// the Scheduler exactly as alone; and beam search refuses sampling.
#include <gtest/gtest.h>

#include "../model/tiny_models.h"
#include "copy_model.h"
#include "live_run.h"
#include "shadow_model.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"
#include "tokenizer/segment_encoder.h"
#include "word_beam_oracle.h"

namespace gpstream {
namespace {

using model::Group;
using stream::EventKind;
using testing::CharCodec;

// Logits after a target prefix (the tokens after the header): pseudo-random in [-3, 3), the end marker
// growing with the prefix's length so sentences end after a few words.
std::vector<float> table_row(int32_t n_vocab, const std::vector<int32_t>& prefix) {
  std::vector<float> row = testing::pseudo_random_logits(0x1234567ull, prefix, static_cast<size_t>(n_vocab));
  row[CharCodec::kEos] = -4.0f + 1.5f * static_cast<float>(prefix.size());
  return row;
}

// A ForwardModel answering table_row for each logits row's target prefix (it ignores the source).
class TableModel final : public testing::ShadowModel {
 public:
  explicit TableModel(const CharCodec& codec) : ShadowModel(codec.vocab_size()) {}

 private:
  std::vector<float> row_logits(const Rows& rows, const model::BatchToken& t) const override {
    const std::vector<int32_t> prefix(rows[1].begin() + 2,
                                      rows[1].begin() + t.n_tgt);  // after the 2-token header
    return table_row(config().n_vocab, prefix);
  }
};

std::vector<stream::TokenKind> kinds_of(const CharCodec& codec) {
  std::vector<stream::TokenKind> k(static_cast<size_t>(codec.vocab_size()));
  for (int32_t id = 0; id < codec.vocab_size(); ++id)
    k[id] = codec.is_special(id)    ? stream::TokenKind::End
            : codec.starts_word(id) ? stream::TokenKind::WordStart
                                    : stream::TokenKind::Inner;
  return k;
}

TEST(SessionBeam, EveryWordIsTheBestWholeWord) {
  CharCodec codec;
  TableModel model(codec);
  const int max_tokens_per_word = 2, max_target_tokens = 9;
  // The expected words: the oracle's best word after the prefix so far, until the end or the token limit.
  std::vector<int32_t> prefix;
  std::vector<std::string> want;
  int words = 0;
  while (static_cast<int>(prefix.size()) < max_target_tokens) {
    testing::WordOracle oracle(
        [&](const std::vector<int32_t>& ids) {
          std::vector<int32_t> p = prefix;
          p.insert(p.end(), ids.begin(), ids.end());
          return table_row(codec.vocab_size(), p);
        },
        [&](const std::vector<int32_t>& ids) {
          return codec.decode(ids).find_first_not_of(' ') != std::string::npos;
        },
        kinds_of(codec));
    const int room = std::min(max_tokens_per_word, max_target_tokens - static_cast<int>(prefix.size()));
    const testing::OracleWord w = oracle.best(room, words > 0);
    if (w.end) break;
    for (std::string& s : tokenizer::split_words(codec.decode(w.ids))) want.push_back(s);
    prefix.insert(prefix.end(), w.ids.begin(), w.ids.end());
    ++words;
  }
  ASSERT_GE(want.size(), 2u);  // the table makes a sentence of several words

  for (stream::Paradigm p : {stream::Paradigm::Offline, stream::Paradigm::Group}) {
    stream::SessionOptions so;
    so.paradigm = p;
    so.k = 100;  // the whole source first: no re-feed (the model ignores the source anyway)
    so.beam = 100000;
    so.max_tokens_per_word = max_tokens_per_word;
    so.max_target_tokens = max_target_tokens;
    auto s = stream::Session::create(model, codec, so);
    ASSERT_TRUE(s.ok());
    const testing::LiveOutput out = testing::run_live(**s, "some source words");
    EXPECT_EQ(out.words, want);
    EXPECT_GT((*s)->stats().search_forwards, 0);
    // The search's rows were dropped again: the cache holds the header and the written tokens only.
    EXPECT_EQ((*s)->cache().rows(Group::Target), 2 + static_cast<int>(prefix.size()));
  }
}

TEST(SessionBeam, ObviousWordsGiveGreedysWordsAndDelays) {
  CharCodec codec;
  testing::CopyModel model(codec);
  for (const char* source : {"hello , world .", "hello, world. again", "a bb ccc dddd eeeee ffffff",
                             "one two stop four five six"}) {
    for (int k : {1, 3, 5}) {
      stream::SessionOptions so;
      so.k = k;
      auto greedy = stream::Session::create(model, codec, so);
      so.beam = 4;
      auto beam = stream::Session::create(model, codec, so);
      ASSERT_TRUE(greedy.ok() && beam.ok());
      const testing::LiveOutput a = testing::run_live(**greedy, source),
                                b = testing::run_live(**beam, source);
      EXPECT_EQ(b.words, a.words) << source << " k=" << k;
      EXPECT_EQ(b.delays, a.delays) << source << " k=" << k;
      EXPECT_EQ((*beam)->units_read(), (*greedy)->units_read());
      EXPECT_EQ((*beam)->stats().refeeds, (*greedy)->stats().refeeds);
    }
  }
}

TEST(SessionBeam, TheSchedulerRunsABeamSessionAsAlone) {
  CharCodec codec;
  auto cfg = testing::tiny_config(true, false, false);
  cfg.n_vocab = codec.vocab_size();
  // Initialisation 5: both sessions write several words before the end marker (several others end at once).
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(5)), 2);
  const std::vector<std::string> sources = {"one two three", "four five six seven"};
  stream::Scheduler sched(*tf);
  std::vector<std::unique_ptr<stream::Session>> sessions;
  for (size_t i = 0; i < sources.size(); ++i) {
    stream::SessionOptions so;
    so.k = 1 + static_cast<int>(i);
    so.beam = 3;
    so.max_target_tokens = 8;
    sessions.push_back(std::move(stream::Session::create(*tf, codec, so)).value());
    ASSERT_TRUE(sessions.back()->push_source(sources[i]).ok());
    ASSERT_TRUE(sessions.back()->end_source().ok());
    sched.add(sessions.back().get());
  }
  const std::vector<testing::LiveOutput> got = testing::run_scheduler(sched, sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const testing::LiveOutput want = testing::run_alone(*tf, codec, sessions[i]->options(), sources[i]);
    EXPECT_GE(want.words.size(), 5u);
    EXPECT_EQ(got[i].words, want.words) << i;
    EXPECT_EQ(got[i].delays, want.delays) << i;
  }
}

TEST(SessionBeam, BeamSearchRefusesSampling) {
  CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so;
  so.beam = 0;
  EXPECT_FALSE(stream::Session::create(model, codec, so).ok());
  so.beam = 2;
  so.decoding.temperature = 0.7f;
  auto r = stream::Session::create(model, codec, so);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("greedy"), std::string::npos);
  so.decoding.temperature = 0;
  so.decoding.repetition_penalty = 1.2f;
  EXPECT_FALSE(stream::Session::create(model, codec, so).ok());
  so.decoding.repetition_penalty = 1;
  EXPECT_TRUE(stream::Session::create(model, codec, so).ok());
}

}  // namespace
}  // namespace gpstream
