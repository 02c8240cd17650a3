// PromptCache (stream/prompt_cache.h): a session given the prompt's rows copied from the cache behaves as one
// that forwards its prompt — the same words and delays in every paradigm, alone, continuous and under the
// Scheduler; its cached K/V rows equal the forwarding session's (within forward_order_bound: the prompt is
// forwarded alone or with the first word, batches the linear layers sum in other orders); it forwards P
// fewer source rows —
// and a cache built for another model or another prompt is refused.
#include "stream/prompt_cache.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../model/tiny_models.h"
#include "../testing/forward_bounds.h"
#include "live_run.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using model::Group;
using stream::EventKind;
using stream::Paradigm;
using testing::CharCodec;

// CharCodec with a prompt of several tokens (the fixture's is one), so the copied rows attend to each other.
class LongPromptCodec final : public stream::SegmentCodec {
 public:
  explicit LongPromptCodec(std::vector<int32_t> prompt) : prompt_(std::move(prompt)) {}
  Result<std::vector<int32_t>> encode(stream::SegmentKind kind, std::string_view text,
                                      bool first) const override {
    if (kind == stream::SegmentKind::Prompt) return prompt_;
    return inner_.encode(kind, text, first);
  }
  std::string decode(std::span<const int32_t> ids) const override { return inner_.decode(ids); }
  bool starts_word(int32_t id) const override { return inner_.starts_word(id); }
  bool is_special(int32_t id) const override { return inner_.is_special(id); }
  int32_t vocab_size() const override { return inner_.vocab_size(); }

 private:
  CharCodec inner_;
  std::vector<int32_t> prompt_;
};

const std::vector<int32_t> kPrompt = {CharCodec::kPrompt, 7, 12, 9, 30, 5};

using Output = testing::LiveOutput;
using testing::run_live;

class PromptCacheTest : public ::testing::Test {
 protected:
  PromptCacheTest() : codec_(kPrompt) {
    cfg_ = testing::tiny_config(true, false, false);
    cfg_.n_vocab = codec_.vocab_size();
    tf_ = testing::tiny_transformer(cfg_, model::random_tensors(cfg_, testing::tiny_init(21)), 2);
  }
  LongPromptCodec codec_;
  model::ModelConfig cfg_;
  std::unique_ptr<model::Transformer> tf_;
};

TEST_F(PromptCacheTest, SessionsBehaveAsWhenTheyForwardThePrompt) {
  auto cache = stream::PromptCache::build(*tf_, codec_);
  ASSERT_TRUE(cache.ok()) << cache.error().message();
  EXPECT_EQ((*cache)->ids(), kPrompt);
  const std::string source = "the cat sat on it. a dog ran";
  for (Paradigm p :
       {Paradigm::Group, Paradigm::BatchStream, Paradigm::Interleaved, Paradigm::InterleavedBlocked,
        Paradigm::ReencodePos, Paradigm::Reencode, Paradigm::Offline}) {
    for (bool continuous : {false, true}) {
      if (continuous && p != Paradigm::Group) continue;
      stream::SessionOptions so;
      so.paradigm = p;
      so.k = 2;
      so.max_target_tokens = 12;
      so.continuous = continuous;
      auto plain = stream::Session::create(*tf_, codec_, so);
      ASSERT_TRUE(plain.ok());
      so.prompt_cache = *cache;
      auto cached = stream::Session::create(*tf_, codec_, so);
      ASSERT_TRUE(cached.ok()) << cached.error().message();
      const Output want = run_live(**plain, source), got = run_live(**cached, source);
      const std::string label = std::string(stream::paradigm_name(p)) + (continuous ? " continuous" : "");
      EXPECT_FALSE(want.words.empty()) << label;
      EXPECT_EQ(got.words, want.words) << label;
      EXPECT_EQ(got.delays, want.delays) << label;
      // The prompt was copied, not forwarded.
      EXPECT_EQ((*cached)->stats().prompt_rows_copied, static_cast<int64_t>(kPrompt.size())) << label;
      EXPECT_EQ((*plain)->stats().prompt_rows_copied, 0) << label;
      EXPECT_EQ((*cached)->stats().source_tokens + static_cast<int64_t>(kPrompt.size()),
                (*plain)->stats().source_tokens)
          << label;
      // Every cached row, the prompt's included, as the forwarding session computed it.
      // Prompt rows forwarded alone (when the cache was built) or with the first word's rows: batches of
      // other sizes, whose linear layers take other kernels and summation orders (testing/forward_bounds.h).
      const model::KvCache &a = (*cached)->cache(), &b = (*plain)->cache();
      const testing::ForwardOrderBound tol = testing::forward_order_bound(cfg_, tf_->weights());
      for (Group g : {Group::Source, Group::Target}) {
        ASSERT_EQ(a.rows(g), b.rows(g)) << label;
        EXPECT_EQ(a.positions(g), b.positions(g)) << label;
        const int64_t n = a.rows(g) * a.kv_dim();
        for (int l = 0; l < cfg_.n_layer; ++l)
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_NEAR(a.k(l, g)[i], b.k(l, g)[i], tol.k[l]) << label << " layer " << l;
            ASSERT_NEAR(a.v(l, g)[i], b.v(l, g)[i], tol.v[l]) << label << " layer " << l;
          }
      }
    }
  }
}

TEST_F(PromptCacheTest, ScheduledSessionsWithTheCacheEqualSessionsRunAlone) {
  auto cache = stream::PromptCache::build(*tf_, codec_);
  ASSERT_TRUE(cache.ok());
  const std::vector<std::string> sources = {"one two three", "four five", "six seven eight nine ten"};
  stream::Scheduler sched(*tf_);
  std::vector<std::unique_ptr<stream::Session>> sessions;
  for (size_t i = 0; i < sources.size(); ++i) {
    stream::SessionOptions so;
    so.k = 1 + static_cast<int>(i);
    so.max_target_tokens = 8;
    so.prompt_cache = *cache;
    sessions.push_back(std::move(stream::Session::create(*tf_, codec_, so)).value());
    ASSERT_TRUE(sessions.back()->push_source(sources[i]).ok());
    ASSERT_TRUE(sessions.back()->end_source().ok());
    sched.add(sessions.back().get());
  }
  const std::vector<Output> got = testing::run_scheduler(sched, sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    stream::SessionOptions so = sessions[i]->options();
    so.prompt_cache = nullptr;
    const Output want = testing::run_alone(*tf_, codec_, so, sources[i]);
    EXPECT_EQ(got[i].words, want.words) << i;
    EXPECT_EQ(got[i].delays, want.delays) << i;
  }
}

TEST_F(PromptCacheTest, ACacheForAnotherModelOrPromptIsRefused) {
  auto cache = stream::PromptCache::build(*tf_, codec_);
  ASSERT_TRUE(cache.ok());
  stream::SessionOptions so;
  so.prompt_cache = *cache;
  // Another model of the same shape.
  auto other = testing::tiny_transformer(cfg_, model::random_tensors(cfg_, testing::tiny_init(22)), 1);
  auto s = stream::Session::create(*other, codec_, so);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("prompt cache"), std::string::npos) << s.error().message();
  // Another prompt.
  LongPromptCodec shorter({CharCodec::kPrompt, 7});
  s = stream::Session::create(*tf_, shorter, so);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("prompt cache"), std::string::npos) << s.error().message();
  // A prompt id outside the vocabulary is refused when building.
  LongPromptCodec bad({CharCodec::kPrompt, cfg_.n_vocab});
  EXPECT_FALSE(stream::PromptCache::build(*tf_, bad).ok());
}

// A prompt of 1,025 tokens is one past the cap of 1,024 (codec.h, kMaxTemplateTokens): refused before
// anything is forwarded, by the cache and by a session; 1,024 tokens are accepted. A session whose template
// fills its cache rows, leaving none for words, is refused too.
TEST_F(PromptCacheTest, LongTemplatesAreRefusedBeforeAnyPrefill) {
  const auto prompt_of = [](size_t n) { return std::vector<int32_t>(n, CharCodec::kFirstChar); };
  LongPromptCodec too_long(prompt_of(1025));
  const int64_t forwarded = tf_->tokens_forwarded();
  auto cache = stream::PromptCache::build(*tf_, too_long);
  ASSERT_FALSE(cache.ok());
  EXPECT_NE(cache.error().message().find("1025 tokens: at most 1024"), std::string::npos)
      << cache.error().message();
  auto s = stream::Session::create(*tf_, too_long, stream::SessionOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("1025 tokens: at most 1024"), std::string::npos) << s.error().message();
  EXPECT_EQ(tf_->tokens_forwarded(), forwarded);

  LongPromptCodec longest(prompt_of(1024));
  EXPECT_TRUE(stream::Session::create(*tf_, longest, stream::SessionOptions{}).ok());
  // 1,024 prompt rows + 4 more of CharCodec's header and end markers = 1,028 rows.
  stream::SessionOptions small;
  small.max_cache_rows = 1028;
  s = stream::Session::create(*tf_, longest, small);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("1028 tokens, leaving no room for words"), std::string::npos)
      << s.error().message();
  small.max_cache_rows = 1029;  // one row left: accepted
  EXPECT_TRUE(stream::Session::create(*tf_, longest, small).ok());
}

}  // namespace
}  // namespace gpstream
