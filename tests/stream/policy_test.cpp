// The confidence policy: its decisions on hand-made states, and Sessions on a scripted model whose
// probabilities are chosen so that the right decision at every word boundary is known by hand (a confident
// model writes at min-lag, an unsure one reads until max-lag, a probability that crosses tau after a read
// makes it write, the source's end forces writing, a missing unit gives NeedSource); min-lag = max-lag = k
// is wait-k exactly; the word beam search decides on the chosen word; the Scheduler runs sessions of both
// policies as alone; specs are validated. Then the local-agreement policy (LocalAgreement-2) on scripted
// models whose continuations are known by hand.
#include "stream/policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "../model/tiny_models.h"
#include "copy_model.h"
#include "live_run.h"
#include "policy_state.h"
#include "shadow_model.h"
#include "stream/scheduler.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream {
namespace {

using stream::Action;
using stream::EventKind;
using stream::Paradigm;
using stream::PolicyKind;
using stream::PolicySpec;
using stream::PolicyState;
using testing::CharCodec;
using testing::LiveOutput;
using testing::run_live;

// CopyModel's translation (each visible source word copied; EOS once all are written), with a chosen
// confidence: the next token gets logit ln(odds), every other token 0, so with V = 67 tokens its softmax
// probability is odds / (odds + 66). odds(visible source words) picks it: 198 → 0.75, 22 → 0.25.
class OddsModel final : public testing::ShadowModel {
 public:
  OddsModel(const CharCodec& codec, std::function<double(int)> odds)
      : ShadowModel(codec.vocab_size()), codec_(codec), odds_(std::move(odds)) {}

 private:
  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    const std::vector<std::vector<int32_t>> words = testing::visible_source(codec_, sh, t).words;
    std::vector<int32_t> translation;
    for (size_t w = 0; w < words.size(); ++w)
      testing::append_target_word(codec_, testing::word_text(codec_, words[w]), w, translation);
    const int32_t next = testing::next_copied_token(t, translation);
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[static_cast<size_t>(next)] = static_cast<float>(std::log(odds_(static_cast<int>(words.size()))));
    return row;
  }

  const CharCodec& codec_;
  std::function<double(int)> odds_;
};

constexpr double kSure = 198;   // p = 198 / 264 = 0.75
constexpr double kUnsure = 22;  // p = 22 / 88 = 0.25
// The probabilities are computed from float logits: ln(odds) rounded to float moves p by about
// p(1 − p) · |ln odds| · 2^-24 < 1e-6, far from tau = 0.5 (0.25 away), so no decision is near a tie.

stream::SessionOptions confidence_options(double tau, int min_lag, int max_lag) {
  stream::SessionOptions so;
  so.policy = {PolicyKind::Confidence, tau, min_lag, max_lag};
  return so;
}

TEST(ConfidencePolicy, DecisionsOnHandMadeStates) {
  const stream::ConfidencePolicy p(0.5, 2, 4);
  auto state = [](int units, int written, std::optional<double> conf, bool finished = false, int n = 9) {
    PolicyState s = stream::progress_state(units, written, finished, n);
    s.confidence = conf;
    return s;
  };
  EXPECT_EQ(p.decide(state(2, 1, 0.99)), Action::Read);            // lag 1 < min-lag 2, however sure
  EXPECT_EQ(p.decide(state(5, 1, 0.01)), Action::Write);           // lag 4 = max-lag, however unsure
  EXPECT_EQ(p.decide(state(4, 1, 0.5)), Action::Write);            // lag 3: p = tau writes
  EXPECT_EQ(p.decide(state(4, 1, 0.49)), Action::Read);            //   p < tau reads
  EXPECT_EQ(p.decide(state(4, 1, std::nullopt)), Action::Write);   // no fresh logits: stop reading
  EXPECT_EQ(p.decide(state(4, 4, 0.99, true, 3)), Action::Write);  // M = 3: all 4 units read, lag 0
  EXPECT_EQ(p.decide(state(3, 3, 0.99, true, 3)), Action::Read);   //   the end marker is left: lag 0 reads
  // end_after_source: an end marker chosen with 4 of 10 units read reads one more, then the lag rules.
  const stream::ConfidencePolicy eas(0.5, 0, 8, true);
  PolicyState e = state(4, 3, 0.9, false, 9);
  e.end_chosen_at = 4;
  EXPECT_EQ(eas.decide(e), Action::Read);
  e.units_read = 5;
  EXPECT_EQ(eas.decide(e), Action::Write);  // lag 2, p ≥ tau
  EXPECT_TRUE(p.adaptive());
  EXPECT_FALSE(stream::WaitKPolicy(3).adaptive());
}

TEST(ConfidencePolicy, SpecsAreValidatedAndNamed) {
  EXPECT_TRUE(stream::validate_policy({PolicyKind::Confidence, 0.0, 0, 1}).ok());
  EXPECT_TRUE(stream::validate_policy({PolicyKind::Confidence, 1.0, 3, 3}).ok());
  EXPECT_FALSE(stream::validate_policy({PolicyKind::Confidence, 1.5, 1, 8}).ok());
  EXPECT_FALSE(stream::validate_policy({PolicyKind::Confidence, -0.1, 1, 8}).ok());
  EXPECT_FALSE(stream::validate_policy({PolicyKind::Confidence, std::nan(""), 1, 8}).ok());
  EXPECT_FALSE(stream::validate_policy({PolicyKind::Confidence, 0.5, -1, 8}).ok());
  EXPECT_FALSE(stream::validate_policy({PolicyKind::Confidence, 0.5, 1, 0}).ok());
  const Status inverted = stream::validate_policy({PolicyKind::Confidence, 0.5, 5, 3});
  ASSERT_FALSE(inverted.ok());
  EXPECT_NE(inverted.error().message().find("min_lag (5) is greater than max_lag (3)"), std::string::npos);
  EXPECT_EQ(stream::parse_policy_name("confidence"), PolicyKind::Confidence);
  EXPECT_EQ(stream::parse_policy_name("wait-k"), PolicyKind::WaitK);
  EXPECT_FALSE(stream::parse_policy_name("nope").has_value());
  auto made = stream::make_policy({PolicyKind::Confidence, 0.5, 1, 8}, 5, false);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE((*made)->adaptive());
  EXPECT_FALSE(stream::make_policy({PolicyKind::Confidence, 2.0, 1, 8}, 5, false).ok());
  // Paradigms: confidence runs with group, batch-stream and interleaved-blocked only.
  CharCodec codec;
  testing::CopyModel model(codec);
  for (Paradigm par : {Paradigm::Group, Paradigm::BatchStream, Paradigm::InterleavedBlocked}) {
    stream::SessionOptions so = confidence_options(0.5, 1, 8);
    so.paradigm = par;
    EXPECT_TRUE(stream::Session::create(model, codec, so).ok()) << stream::paradigm_name(par);
  }
  for (Paradigm par : {Paradigm::Offline, Paradigm::Reencode, Paradigm::ReencodePos, Paradigm::Interleaved}) {
    stream::SessionOptions so = confidence_options(0.5, 1, 8);
    so.paradigm = par;
    auto s = stream::Session::create(model, codec, so);
    ASSERT_FALSE(s.ok()) << stream::paradigm_name(par);
    EXPECT_NE(s.error().message().find("paradigms only"), std::string::npos) << s.error().message();
  }
}

struct PolicyRun {
  LiveOutput out;
  int64_t refeeds = 0;
  int units_read = 0;
};

PolicyRun run_confidence(model::ForwardModel& model, const CharCodec& codec, const stream::SessionOptions& so,
                         const std::string& source) {
  auto s = stream::Session::create(model, codec, so);
  EXPECT_TRUE(s.ok()) << s.error().message();
  if (!s.ok()) return {};
  PolicyRun r;
  r.out = run_live(**s, source);
  r.refeeds = (*s)->stats().refeeds;
  r.units_read = (*s)->units_read();
  return r;
}

// p = 0.75 ≥ tau = 0.5 everywhere: every decision beyond min-lag 2 writes, so word j is written with lag 2,
// after j + 1 units (wait-2), the last word after all 4 words: delays 2, 3, 4, 4. Reads: 2 at the start,
// then one per word after words 1, 2, 3 (the min-lag rule; the third is the end marker): 3 re-feeds, 5 units.
TEST(ConfidenceSession, AConfidentModelWritesAtMinLag) {
  CharCodec codec;
  OddsModel model(codec, [](int) { return kSure; });
  const PolicyRun r = run_confidence(model, codec, confidence_options(0.5, 2, 5), "a b c d");
  EXPECT_EQ(r.out.words, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 3, 4, 4}));
  EXPECT_EQ(r.refeeds, 3);
  EXPECT_EQ(r.units_read, 5);
}

// p = 0.25 < tau everywhere: it reads one unit at a time until lag = max-lag 3. Start: 1 unit (min-lag); the
// header's row reads unit 2, the re-fed row unit 3 (lag 3): "a" after 3. After "a" (lag 2) one read → "b"
// after 4; after "b" (lag 2) the end marker → "c" with 4 words read; after "c" everything is read: "d"
// after 4. Delays 3, 4, 4, 4; 4 re-feeds (units 2, 3, 4, 5 one at a time), 5 units.
TEST(ConfidenceSession, AnUnsureModelReadsUntilMaxLag) {
  CharCodec codec;
  OddsModel model(codec, [](int) { return kUnsure; });
  const PolicyRun r = run_confidence(model, codec, confidence_options(0.5, 1, 3), "a b c d");
  EXPECT_EQ(r.out.words, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 4, 4, 4}));
  EXPECT_EQ(r.refeeds, 4);
  EXPECT_EQ(r.units_read, 5);
}

// p = 0.25 while fewer than 3 source words are visible, 0.75 from 3 on; tau 0.5, lags 1..6, 5 words. The
// header's row reads units 2 and 3 one at a time; with 3 visible p crosses tau: "a", "b", "c" after 3
// (lags 3, 2, 1). The model then ends (all visible words written): lag 0 < 1 reads unit 4, the re-fed row
// chooses "d" with p = 0.75 at lag 1: written after 4; likewise "e" after 5; the last end marker reads
// the source end marker (unit 6) and, everything read, ends. Delays 3, 3, 3, 4, 5; 5 re-feeds, 6 units.
TEST(ConfidenceSession, AProbabilityCrossingTauAfterAReadWrites) {
  CharCodec codec;
  OddsModel model(codec, [](int visible) { return visible < 3 ? kUnsure : kSure; });
  const PolicyRun r = run_confidence(model, codec, confidence_options(0.5, 1, 6), "a b c d e");
  EXPECT_EQ(r.out.words, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 3, 3, 4, 5}));
  EXPECT_EQ(r.refeeds, 5);
  EXPECT_EQ(r.units_read, 6);
}

// Never confident and max-lag 100 out of reach: only the source's end stops the reading. "a b": units 2
// and 3 (the end marker) are read one at a time on the header's row, then everything is read and both
// words are written: delays 2, 2.
TEST(ConfidenceSession, TheSourceEndForcesWriting) {
  CharCodec codec;
  OddsModel model(codec, [](int) { return kUnsure; });
  const PolicyRun r = run_confidence(model, codec, confidence_options(0.5, 1, 100), "a b");
  EXPECT_EQ(r.out.words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 2}));
  EXPECT_EQ(r.units_read, 3);
}

// The unit it wants has not arrived: NeedSource, as under wait-k, with both words read and nothing written;
// asked again it says NeedSource again; once the source ends it writes.
TEST(ConfidenceSession, AMissingUnitGivesNeedSourceNotAStall) {
  CharCodec codec;
  OddsModel model(codec, [](int) { return kUnsure; });
  auto s = stream::Session::create(model, codec, confidence_options(0.5, 1, 100));
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->push_source("a b").ok());
  for (int i = 0; i < 2; ++i) {
    auto e = (*s)->step();
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->kind, EventKind::NeedSource);
    EXPECT_EQ((*s)->units_read(), 2);
  }
  ASSERT_TRUE((*s)->end_source().ok());
  const LiveOutput out = run_live(**s, "");
  EXPECT_EQ(out.words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(out.delays, (std::vector<int>{2, 2}));
}

// With min-lag = max-lag = k the probability never matters: lag < k reads (all missing units at once, as
// wait-k does), lag ≥ k writes — wait-k's rule, the end marker's min(k + N, M + 1) included. Same words,
// delays, re-feeds and forwards as wait-k on the CopyModel cases of SessionDelays.
TEST(ConfidenceSession, EqualLagsAreWaitK) {
  CharCodec codec;
  testing::CopyModel model(codec);
  for (const std::string source :
       {"hello , world .", "a bb ccc dddd eeeee ffffff", "one two stop four five six"}) {
    for (int k : {1, 3, 5}) {
      stream::SessionOptions wk;
      wk.k = k;
      auto a = stream::Session::create(model, codec, wk);
      auto b = stream::Session::create(model, codec, confidence_options(0.9, k, k));
      ASSERT_TRUE(a.ok() && b.ok());
      const LiveOutput wa = run_live(**a, source), wb = run_live(**b, source);
      EXPECT_EQ(wa.words, wb.words) << source << " k=" << k;
      EXPECT_EQ(wa.delays, wb.delays) << source << " k=" << k;
      EXPECT_EQ((*a)->stats().refeeds, (*b)->stats().refeeds) << source << " k=" << k;
      EXPECT_EQ((*a)->stats().forwards, (*b)->stats().forwards) << source << " k=" << k;
    }
  }
}

// Word beam search decides on the chosen word's probability: each word here is one token, so it equals the
// token's and the decisions (and delays) are those of AProbabilityCrossingTauAfterAReadWrites.
TEST(ConfidenceSession, TheWordBeamDecidesOnTheChosenWord) {
  CharCodec codec;
  OddsModel model(codec, [](int visible) { return visible < 3 ? kUnsure : kSure; });
  stream::SessionOptions so = confidence_options(0.5, 1, 6);
  so.beam = 2;
  const PolicyRun r = run_confidence(model, codec, so, "a b c d e");
  EXPECT_EQ(r.out.words, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 3, 3, 4, 5}));
  EXPECT_EQ(r.units_read, 6);
}

TEST(Scheduler, SessionsOfDifferentPoliciesEqualSessionsRunAlone) {
  CharCodec codec;
  auto cfg = testing::tiny_config(true, false, false);
  cfg.n_vocab = codec.vocab_size();
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(4)), 2);
  const std::vector<std::string> sources = {"one two three", "four five", "six seven eight nine ten",
                                            "eleven", "twelve thirteen fourteen"};
  std::vector<stream::SessionOptions> options(sources.size());
  options[0].k = 2;  // wait-k
  options[1] = confidence_options(0.02, 1, 3);
  options[2] = confidence_options(0.5, 0, 4);
  options[2].paradigm = Paradigm::BatchStream;
  options[3] = confidence_options(0.01, 2, 2);
  options[3].paradigm = Paradigm::InterleavedBlocked;
  options[4] = confidence_options(0.05, 1, 4);
  options[4].beam = 2;
  for (auto& o : options) o.max_target_tokens = 8;
  testing::expect_batched_equals_alone(*tf, codec, options, sources);
}

// local-agreement (LocalAgreement-2): a scripted model whose translation is a function of the number of
// source words it sees; the target copies it token by token (EOS after its last word).
class ScriptModel final : public testing::ShadowModel {
 public:
  ScriptModel(const CharCodec& codec, std::function<std::vector<std::string>(int)> script)
      : ShadowModel(codec.vocab_size()), codec_(codec), script_(std::move(script)) {}

 private:
  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    const std::vector<std::string> words =
        script_(static_cast<int>(testing::visible_source(codec_, sh, t).words.size()));
    std::vector<int32_t> translation;
    for (size_t w = 0; w < words.size(); ++w) testing::append_target_word(codec_, words[w], w, translation);
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[static_cast<size_t>(testing::next_copied_token(t, translation))] = 10.0f;
    return row;
  }

  const CharCodec& codec_;
  std::function<std::vector<std::string>(int)> script_;
};

stream::SessionOptions agreement_options(int min_lag, int max_lag) {
  stream::SessionOptions so;
  so.policy.kind = PolicyKind::LocalAgreement;
  so.policy.min_lag = min_lag;
  so.policy.max_lag = max_lag;
  return so;
}

struct AgreementRun {
  LiveOutput out;
  std::vector<std::vector<std::string>> tentative;  // the words of each Tentative event
  stream::SessionStats stats;
  int units_read = 0;
};

// As run_live, also collecting the Tentative events.
AgreementRun run_agreement(model::ForwardModel& model, const CharCodec& codec,
                           const stream::SessionOptions& so, const std::string& source) {
  auto s = stream::Session::create(model, codec, so);
  EXPECT_TRUE(s.ok()) << s.error().message();
  if (!s.ok()) return {};
  AgreementRun r;
  testing::drive_live(**s, testing::split_on_spaces(source), [&](const stream::Event& e) {
    if (e.kind == EventKind::Word) {
      r.out.words.push_back(e.word);
      r.out.delays.push_back(e.delay);
    } else if (e.kind == EventKind::Tentative) {
      r.tentative.push_back(e.words);
    }
  });
  r.stats = (*s)->stats();
  r.units_read = (*s)->units_read();
  return r;
}

using Words = std::vector<std::string>;

TEST(LocalAgreementPolicy, DecisionsOnHandMadeStates) {
  const stream::LocalAgreementPolicy p(2, 4);
  auto state = [](int units, int written, std::optional<PolicyState::Agreement> a, bool finished = false,
                  int n = 9) {
    PolicyState s = stream::progress_state(units, written, finished, n);
    s.agreement = a;
    return s;
  };
  using A = PolicyState::Agreement;
  EXPECT_EQ(p.decide(state(2, 1, A{3, 3})), Action::Read);            // lag 1 < min-lag 2, however agreed
  EXPECT_EQ(p.decide(state(3, 1, std::nullopt)), Action::Write);      // no continuation yet: decode one
  EXPECT_EQ(p.decide(state(3, 1, A{1, 2})), Action::Write);           // an agreed word
  EXPECT_EQ(p.decide(state(3, 1, A{0, 2})), Action::Read);            //   none
  EXPECT_EQ(p.decide(state(5, 1, A{0, 2})), Action::Write);           // lag 4 = max-lag: the next word anyway
  EXPECT_EQ(p.decide(state(5, 1, A{0, 0})), Action::Read);            //   unless the continuation has none
  EXPECT_EQ(p.decide(state(4, 4, A{0, 0}, true, 3)), Action::Write);  // M = 3: everything read
  EXPECT_EQ(p.decide(state(3, 1, A{0, 0}, true, 3)), Action::Read);   //   the end marker is left
  EXPECT_TRUE(p.adaptive());
  EXPECT_TRUE(p.local_agreement());
  EXPECT_FALSE(stream::ConfidencePolicy(0.5, 1, 8).local_agreement());
}

TEST(LocalAgreementPolicy, SpecsAreValidatedAndNamed) {
  EXPECT_EQ(stream::parse_policy_name("local-agreement"), PolicyKind::LocalAgreement);
  EXPECT_STREQ(stream::policy_name(PolicyKind::LocalAgreement), "local-agreement");
  EXPECT_NE(stream::policy_names().find("local-agreement"), std::string::npos);
  const Status inverted = stream::validate_policy({PolicyKind::LocalAgreement, 0.5, 5, 3});
  ASSERT_FALSE(inverted.ok());
  EXPECT_NE(inverted.error().message().find("local-agreement policy: min_lag (5)"), std::string::npos)
      << inverted.error().message();
  for (int bad : {1, stream::kMaxPolicyAgreement + 1}) {
    const Status st = stream::validate_policy({.kind = PolicyKind::LocalAgreement, .agreement = bad});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message(),
              "local-agreement policy: agreement must be in [2, 16], got " + std::to_string(bad));
  }
  EXPECT_EQ(stream::policy_folder_suffix({.kind = PolicyKind::LocalAgreement}, 5), "-local-agreement-lag1-8");
  EXPECT_EQ(stream::policy_folder_suffix({.kind = PolicyKind::LocalAgreement, .agreement = 3}, 5),
            "-local-agreement-lag1-8-agree3");
  EXPECT_EQ(stream::policy_setting_label({.kind = PolicyKind::LocalAgreement, .agreement = 3}, 5),
            "lag=1-8-agree3");
  auto made = stream::make_policy({PolicyKind::LocalAgreement, 0.5, 1, 8}, 5, false);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE((*made)->local_agreement());
  CharCodec codec;
  testing::CopyModel model(codec);
  for (Paradigm par : {Paradigm::Group, Paradigm::BatchStream, Paradigm::InterleavedBlocked}) {
    stream::SessionOptions so = agreement_options(1, 8);
    so.paradigm = par;
    EXPECT_TRUE(stream::Session::create(model, codec, so).ok()) << stream::paradigm_name(par);
  }
  for (Paradigm par : {Paradigm::Offline, Paradigm::Reencode, Paradigm::ReencodePos, Paradigm::Interleaved}) {
    stream::SessionOptions so = agreement_options(1, 8);
    so.paradigm = par;
    auto s = stream::Session::create(model, codec, so);
    ASSERT_FALSE(s.ok()) << stream::paradigm_name(par);
    EXPECT_NE(s.error().message().find("local-agreement policy runs with the group"), std::string::npos)
        << s.error().message();
  }
  // Greedy continuations only: sampling and the word beam are refused.
  stream::SessionOptions sampled = agreement_options(1, 8);
  sampled.decoding.temperature = 0.7f;
  EXPECT_FALSE(stream::Session::create(model, codec, sampled).ok());
  stream::SessionOptions beam = agreement_options(1, 8);
  beam.beam = 2;
  EXPECT_FALSE(stream::Session::create(model, codec, beam).ok());
}

// The scripted translation of the two tests below, with v source words visible.
Words translation_changing_with_each_read(int v) {
  if (v <= 1) return {"x", "y"};
  if (v == 2) return {"a", "y", "z"};
  if (v == 3) return {"a", "b", "z"};
  return {"a", "b", "c", "d"};
}

// The continuation changes after each read: with v source words visible the model's translation is
//   v=1: x y    v=2: a y z    v=3: a b z    v≥4: a b c d.
// Start (min-lag 1): unit 1, continuation [x y]; no previous one: nothing agrees, read. Unit 2: [a y z]
// against [x y]: "a" ≠ "x" (the "y" at the same place does not count: only a common prefix does), read.
// Unit 3: [a b z] against [a y z]: "a" agrees, written after 3 units; [b z] stays tentative, read. Unit 4
// (re-feeding "a"): the continuation after "a" is [b c d], against [b z]: "b" written after 4; [c d]
// tentative, read. Unit 5 is the end marker (NeedSource until end_source): everything read, the rest is
// decoded as usual: "c", "d" after 4 words. 4 re-feeds (units 2..5), 5 units. Tentative forwards, one per
// token: 2 + 3 + 3 + 3 = 11; the rows of "a" and "b" stay, so 9 are dropped.
TEST(LocalAgreementSession, OnlyWordsTwoContinuationsAgreeOnAreWritten) {
  CharCodec codec;
  ScriptModel model(codec, translation_changing_with_each_read);
  const AgreementRun r = run_agreement(model, codec, agreement_options(1, 8), "a b c d");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 4, 4, 4}));
  EXPECT_EQ(r.tentative, (std::vector<Words>{{"x", "y"}, {"a", "y", "z"}, {"b", "z"}, {"c", "d"}}));
  EXPECT_EQ(r.units_read, 5);
  EXPECT_EQ(r.stats.refeeds, 4);
  EXPECT_EQ(r.stats.tentative_forwards, 11);
  EXPECT_EQ(r.stats.tentative_rows, 9);
}

// On the copy model every continuation extends the previous one by the word just read: each word is written
// one read after it was first seen (wait-2 after the first): "a" after 2, "b" after 3, "c" after 4; the
// end marker (unit 5) lets "d" through after 4. Every source word is read, the end marker too.
TEST(LocalAgreementSession, AStableModelWritesOneReadLate) {
  CharCodec codec;
  testing::CopyModel model(codec);
  const AgreementRun r = run_agreement(model, codec, agreement_options(1, 8), "a bb ccc dddd");
  EXPECT_EQ(r.out.words, (Words{"a", "bb", "ccc", "dddd"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{2, 3, 4, 4}));
  EXPECT_EQ(r.tentative, (std::vector<Words>{{"a"}, {"bb"}, {"ccc"}, {"dddd"}}));
  EXPECT_EQ(r.units_read, 5);
}

// Continuations that never agree (with v words visible, word i of the translation is letter 3v + i mod 20):
// only max-lag 3 makes it write, the continuation's next word, whenever lag reaches 3. Units 1, 2: read;
// unit 3: lag 3, word 0 of v=3 ("j") after 3; unit 4: word 1 of v=4 ("n") after 4; unit 5: word 2 of v=5
// ("r") after 5; the end marker: the rest of v=5 ("s", "t") after 5. Everything is written, every unit read.
TEST(LocalAgreementSession, MaxLagBoundsTheLagWithoutAgreement) {
  CharCodec codec;
  ScriptModel model(codec, [](int v) {
    Words w;
    for (int i = 0; i < v; ++i) w.push_back(std::string(1, CharCodec::kChars[(3 * v + i) % 20]));
    return w;
  });
  const AgreementRun r = run_agreement(model, codec, agreement_options(1, 3), "a b c d e");
  EXPECT_EQ(r.out.words, (Words{"j", "n", "r", "s", "t"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 4, 5, 5, 5}));
  EXPECT_EQ(r.units_read, 6);
}

// A model that ends before the source does (its continuations end with the end marker after the words it
// sees) never ends early: the end marker is written only once everything is read; all words given are read.
// The same script with agreement 3: a word is written once three successive continuations begin with it.
// Units 1, 2: fewer than two earlier continuations, nothing agrees, read. Unit 3: [a b z] against [x y]
// and [a y z]: nothing in common with [x y], read. Unit 4: [a b c d] against [a y z] and [a b z]: "a"
// agrees, written after 4 units; [b c d] stays tentative, read. Unit 5 is the end marker: the rest ("b",
// "c", "d") decoded as usual after 4 words. Tentative forwards: 2 + 3 + 3 + 4 = 12, the row of "a" kept.
TEST(LocalAgreementSession, AgreementThreeWaitsForThreeContinuations) {
  CharCodec codec;
  ScriptModel model(codec, translation_changing_with_each_read);
  stream::SessionOptions so = agreement_options(1, 8);
  so.policy.agreement = 3;
  const AgreementRun r = run_agreement(model, codec, so, "a b c d");
  EXPECT_EQ(r.out.words, (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{4, 4, 4, 4}));
  EXPECT_EQ(r.tentative, (std::vector<Words>{{"x", "y"}, {"a", "y", "z"}, {"a", "b", "z"}, {"b", "c", "d"}}));
  EXPECT_EQ(r.units_read, 5);
  EXPECT_EQ(r.stats.refeeds, 4);
  EXPECT_EQ(r.stats.tentative_forwards, 12);
  EXPECT_EQ(r.stats.tentative_rows, 11);
}

// On the copy model with agreement 3 each word is written two reads after it was first seen: "a" after 3
// (continuations [a], [a bb], [a bb ccc]), "bb" after 4 ([bb], [bb ccc], [bb ccc dddd] once "a" is written);
// the end marker (unit 5) lets "ccc" and "dddd" through after 4.
TEST(LocalAgreementSession, AgreementThreeOnAStableModelWritesTwoReadsLate) {
  CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so = agreement_options(1, 8);
  so.policy.agreement = 3;
  const AgreementRun r = run_agreement(model, codec, so, "a bb ccc dddd");
  EXPECT_EQ(r.out.words, (Words{"a", "bb", "ccc", "dddd"}));
  EXPECT_EQ(r.out.delays, (std::vector<int>{3, 4, 4, 4}));
  EXPECT_EQ(r.units_read, 5);
}

TEST(LocalAgreementSession, TheEndMarkerWaitsForTheWholeSource) {
  CharCodec codec;
  testing::CopyModel model(codec);
  const AgreementRun r = run_agreement(model, codec, agreement_options(1, 8), "one two stop four five");
  EXPECT_EQ(r.out.words, (Words{"one", "two"}));
  EXPECT_EQ(r.units_read, 6);
}

TEST(Scheduler, LocalAgreementSessionsAmongOthersEqualSessionsRunAlone) {
  CharCodec codec;
  auto cfg = testing::tiny_config(true, false, false);
  cfg.n_vocab = codec.vocab_size();
  auto tf = testing::tiny_transformer(cfg, model::random_tensors(cfg, testing::tiny_init(5)), 2);
  const std::vector<std::string> sources = {"one two three", "four five six seven", "eight nine ten eleven",
                                            "twelve", "thirteen fourteen fifteen"};
  std::vector<stream::SessionOptions> options(sources.size());
  options[0].k = 2;  // wait-k
  options[1] = agreement_options(1, 3);
  options[2] = agreement_options(0, 2);
  options[2].paradigm = Paradigm::BatchStream;
  options[3] = agreement_options(1, 8);
  options[3].paradigm = Paradigm::InterleavedBlocked;
  options[4] = confidence_options(0.05, 1, 4);
  for (auto& o : options) o.max_target_tokens = 10;
  const std::vector<LiveOutput> got = testing::expect_batched_equals_alone(*tf, codec, options, sources);
  ASSERT_EQ(got.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) EXPECT_FALSE(got[i].words.empty()) << i;
  // The local-agreement sessions decoded tentative continuations (a session alone shows it).
  auto alone = stream::Session::create(*tf, codec, options[1]);
  ASSERT_TRUE(alone.ok());
  ASSERT_TRUE((*alone)->push_source(sources[1]).ok());
  ASSERT_TRUE((*alone)->end_source().ok());
  testing::run_live(**alone, "");
  EXPECT_GT((*alone)->stats().tentative_forwards, 0);
}

}  // namespace
}  // namespace gpstream
