// The alignatt policy (AlignAtt): its decisions on hand-made states; Sessions on a scripted model whose
// attention peaks on the source word it is about to translate, so that the right decision at every word
// start is known by hand (a word is written once `frames` units have been read past its own source word);
// max-lag bounding it; the attention tap of a real Transformer routed by the Scheduler to alignatt sessions
// among sessions of other policies, each getting what it gets alone; specs, names and checks.
#include <gtest/gtest.h>

#include <cmath>

#include "../model/tiny_models.h"
#include "copy_model.h"
#include "live_run.h"
#include "policy_state.h"
#include "shadow_model.h"
#include "stream/policy.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using stream::Action;
using stream::Paradigm;
using stream::PolicyKind;
using stream::PolicySpec;
using stream::PolicyState;
using testing::CharCodec;
using testing::LiveOutput;

// CopyModel's translation (each visible source word copied, EOS once all are written), with an attention
// that peaks on the source word the row is about to copy: the row choosing target word j (counted from 0)
// puts 0.9 on the first row of source word min(j, visible words − 1) and shares 0.1 over its other rows.
// With peak_on_first, it looks at the first word whatever it writes.
class AlignedModel final : public testing::ShadowModel {
 public:
  explicit AlignedModel(const CharCodec& codec, bool peak_on_first = false)
      : ShadowModel(codec.vocab_size()), codec_(codec), peak_on_first_(peak_on_first) {}

 private:
  // The translation of the visible words and where each of its words starts.
  struct Translation {
    std::vector<int32_t> ids;
    std::vector<size_t> starts;
  };
  Translation translate(const testing::VisibleSource& src) const {
    Translation tr;
    for (size_t w = 0; w < src.words.size(); ++w) {
      tr.starts.push_back(tr.ids.size());
      testing::append_target_word(codec_, testing::word_text(codec_, src.words[w]), w, tr.ids);
    }
    return tr;
  }

  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    const int32_t next = testing::next_copied_token(t, translate(testing::visible_source(codec_, sh, t)).ids);
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[static_cast<size_t>(next)] = 10.0f;
    return row;
  }

  std::vector<float> row_attention(const Rows& sh, const model::BatchToken& t) const override {
    const testing::VisibleSource src = testing::visible_source(codec_, sh, t);
    const Translation tr = translate(src);
    const size_t written = static_cast<size_t>(std::max(t.n_tgt - 2, 0));  // after the 2-token header
    size_t j = 0;  // the target word this row chooses (or continues): the words begun before it
    while (j < tr.starts.size() && tr.starts[j] < written) ++j;
    int peak = 0;  // the prompt's row while no word is visible
    if (!src.words.empty()) {
      const size_t word = peak_on_first_ ? 0 : std::min(j, src.words.size() - 1);
      peak = 1;  // after the prompt's row
      for (size_t w = 0; w < word; ++w) peak += static_cast<int>(src.words[w].size());
    }
    std::vector<float> p(static_cast<size_t>(t.n_src),
                         t.n_src > 1 ? 0.1f / static_cast<float>(t.n_src - 1) : 0);
    p[static_cast<size_t>(peak)] = t.n_src > 1 ? 0.9f : 1.0f;
    return p;
  }

  const CharCodec& codec_;
  bool peak_on_first_;
};

stream::SessionOptions alignatt_options(int frames, int min_lag, int max_lag) {
  stream::SessionOptions so;
  so.policy.kind = PolicyKind::AlignAtt;
  so.policy.frames = frames;
  so.policy.min_lag = min_lag;
  so.policy.max_lag = max_lag;
  return so;
}

struct AlignAttRun {
  LiveOutput out;
  int units_read = 0;
};

AlignAttRun run_alignatt(model::ForwardModel& model, const CharCodec& codec, const stream::SessionOptions& so,
                         const std::string& source) {
  auto s = stream::Session::create(model, codec, so);
  EXPECT_TRUE(s.ok()) << s.error().message();
  if (!s.ok()) return {};
  AlignAttRun r;
  r.out = testing::run_live(**s, source);
  r.units_read = (*s)->units_read();
  return r;
}

using Words = std::vector<std::string>;

TEST(AlignAttPolicy, DecisionsOnHandMadeStates) {
  const stream::AlignAttPolicy p(2, 1, 5);
  auto state = [](int units, int written, std::optional<int> attended, bool finished = false, int n = 9) {
    PolicyState s = stream::progress_state(units, written, finished, n);
    s.attended_unit = attended;
    return s;
  };
  EXPECT_EQ(p.decide(state(1, 1, 0)), Action::Read);              // lag 0 < min-lag 1, attention anywhere
  EXPECT_EQ(p.decide(state(6, 1, 5)), Action::Write);             // lag 5 = max-lag, attention on the newest
  EXPECT_EQ(p.decide(state(4, 1, 3)), Action::Read);              // lag 3: the last unit read (3)
  EXPECT_EQ(p.decide(state(4, 1, 2)), Action::Read);              //   the one before: still the last 2
  EXPECT_EQ(p.decide(state(4, 1, 1)), Action::Write);             //   older: write
  EXPECT_EQ(p.decide(state(4, 1, -1)), Action::Write);            //   the prompt: write
  EXPECT_EQ(p.decide(state(4, 1, std::nullopt)), Action::Write);  // no fresh row: stop reading
  EXPECT_EQ(p.decide(state(4, 4, 3, true, 3)), Action::Write);    // M = 3: all 4 units read
  EXPECT_EQ(p.decide(state(3, 1, 2, true, 3)), Action::Read);     //   the end marker is left to read
  // end_after_source: an end marker chosen with 4 of 10 units read reads one more, then the rules above.
  const stream::AlignAttPolicy eas(2, 0, 8, true);
  PolicyState e = state(4, 3, 0);
  e.end_chosen_at = 4;
  EXPECT_EQ(eas.decide(e), Action::Read);
  e.units_read = 5;
  EXPECT_EQ(eas.decide(e), Action::Write);
  EXPECT_TRUE(p.adaptive());
  EXPECT_TRUE(p.reads_attention());
  EXPECT_FALSE(stream::ConfidencePolicy(0.5, 1, 8).reads_attention());
}

TEST(AlignAttPolicy, SpecsAreValidatedAndNamed) {
  PolicySpec spec{PolicyKind::AlignAtt};
  EXPECT_TRUE(stream::validate_policy(spec).ok());
  spec.frames = 0;
  EXPECT_FALSE(stream::validate_policy(spec).ok());
  spec.frames = 3;
  spec.layers = {2, 0};
  EXPECT_TRUE(stream::validate_policy(spec).ok());
  spec.layers = {1, -1};
  EXPECT_FALSE(stream::validate_policy(spec).ok());
  spec.layers = {1, 1};
  const Status twice = stream::validate_policy(spec);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message().find("layer 1 given twice"), std::string::npos)
      << twice.error().message();
  EXPECT_EQ(stream::parse_policy_name("alignatt"), PolicyKind::AlignAtt);
  EXPECT_STREQ(stream::policy_name(PolicyKind::AlignAtt), "alignatt");
  // Every command names a setting the same way.
  const PolicySpec alignatt{.kind = PolicyKind::AlignAtt, .frames = 2};
  const PolicySpec confidence{.kind = PolicyKind::Confidence, .tau = 0.2};
  const PolicySpec agreement{.kind = PolicyKind::LocalAgreement, .min_lag = 2, .max_lag = 6};
  EXPECT_EQ(stream::policy_folder_suffix(alignatt, 5), "-alignatt-f2");
  EXPECT_EQ(stream::policy_folder_suffix(confidence, 5), "-confidence-tau0.2");
  EXPECT_EQ(stream::policy_folder_suffix(agreement, 5), "-local-agreement-lag2-6");
  EXPECT_EQ(stream::policy_folder_suffix(PolicySpec{}, 5), "-k5");
  EXPECT_EQ(stream::policy_setting_label(alignatt, 5), "f=2");
  EXPECT_EQ(stream::policy_setting_label(confidence, 5), "tau=0.2");
  EXPECT_EQ(stream::policy_setting_label(agreement, 5), "lag=2-6");
  EXPECT_EQ(stream::policy_setting_label(PolicySpec{}, 7), "k=7");
  // The layers must exist in the model (the scripted one has one), and the paradigm must be a streaming one.
  CharCodec codec;
  AlignedModel model(codec);
  stream::SessionOptions so = alignatt_options(1, 1, 8);
  so.policy.layers = {0};
  EXPECT_TRUE(stream::Session::create(model, codec, so).ok());
  so.policy.layers = {1};
  EXPECT_FALSE(stream::Session::create(model, codec, so).ok());
  so.policy.layers = {};
  so.paradigm = Paradigm::Interleaved;
  EXPECT_FALSE(stream::Session::create(model, codec, so).ok());
}

// frames 1: word j (from 0) is written once its own source word is not the last unit read, i.e. after j + 2
// units: "a" after 2 (the header's row looks at "a", the last unit: read; the re-fed row sees "a b"), "b"
// after 3, "c" after 4; "d" looks at "d", the last word: the end marker is read, then everything is: it
// writes with 4 words read. Delays 2, 3, 4, 4; 5 units.
TEST(AlignAttSession, AWordWaitsUntilItsSourceIsNoLongerTheNewest) {
  CharCodec codec;
  AlignedModel model(codec);
  const AlignAttRun r = run_alignatt(model, codec, alignatt_options(1, 1, 8), "a b c d");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 3, 4, 4}));
  EXPECT_EQ(r.units_read, 5);
}

// frames 2: two units past the word's own: "a" after 3, "b" after 4, then the source is all read (the end
// marker as the fifth unit): delays 3, 4, 4, 4.
TEST(AlignAttSession, MoreFramesWaitLonger) {
  CharCodec codec;
  AlignedModel model(codec);
  const AlignAttRun r = run_alignatt(model, codec, alignatt_options(2, 1, 8), "a b c d");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 4, 4, 4}));
}

// max-lag 2 bounds frames 3 (which alone would wait for three units past each word): lag 2 writes, so word j
// after j + 2 units, as wait-2.
TEST(AlignAttSession, MaxLagBoundsTheWait) {
  CharCodec codec;
  AlignedModel model(codec);
  const AlignAttRun r = run_alignatt(model, codec, alignatt_options(3, 1, 2), "a b c d e");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 3, 4, 5, 5}));
}

// Attention that stays on the first word is never on the newest unit once a second is read: it writes at
// min-lag 1 from the second word on ("a" itself waits for a second unit: with one read, the first is the
// newest): delays 2, 2, 3, 4.
TEST(AlignAttSession, AttentionOnOldInputWritesAtMinLag) {
  CharCodec codec;
  AlignedModel model(codec, /*peak_on_first=*/true);
  const AlignAttRun r = run_alignatt(model, codec, alignatt_options(1, 1, 8), "a b c d");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 2, 3, 4}));
}

// A real Transformer's tap, through the Scheduler: alignatt sessions (every layer, and one chosen layer; two
// paradigms) batched with wait-k and confidence sessions give what each gives alone.
TEST(Scheduler, AlignAttSessionsAmongOthersEqualSessionsRunAlone) {
  CharCodec codec;
  auto cfg = testing::tiny_config(true, false, false);
  cfg.n_vocab = codec.vocab_size();
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(6)), 2);
  const std::vector<std::string> sources = {"one two three", "four five six seven", "eight nine ten eleven",
                                            "twelve", "thirteen fourteen fifteen"};
  std::vector<stream::SessionOptions> options(sources.size());
  options[0].k = 2;  // wait-k
  options[1] = alignatt_options(1, 1, 4);
  options[2] = alignatt_options(2, 0, 3);
  options[2].paradigm = Paradigm::BatchStream;
  options[2].policy.layers = {1};
  options[3].policy = {PolicyKind::Confidence, 0.05, 1, 4};
  options[4] = alignatt_options(1, 1, 8);
  options[4].paradigm = Paradigm::InterleavedBlocked;
  for (auto& o : options) o.max_target_tokens = 10;
  const std::vector<LiveOutput> got = testing::expect_batched_equals_alone(*tf, codec, options, sources);
  ASSERT_EQ(got.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) EXPECT_FALSE(got[i].words.empty()) << i;
}

}  // namespace
}  // namespace gpstream
