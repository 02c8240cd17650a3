// Model-decided sentence ends (stream/sentence_ends.h) against a bigram model whose logits are a table row
// per input token: every log-probability the detector combines is then a closed form over the table, so the
// expected decisions come from a hand derivation (a table with one peaked row) and from a second, direct
// implementation of the two explanations (a random table), with and without the word of lookahead. Then a
// continuous Session over unpunctuated text: its segments end where the model says, and every word given is
// read and written.
#include "stream/sentence_ends.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "copy_model.h"
#include "live_run.h"
#include "stream/session.h"
#include "test_codec.h"

namespace gpstream::testing {
namespace {

using stream::EventKind;

// A source row's logits: table[id of the row's own token]. Target rows copy the visible source words one to
// one, as CopyModel does, so a session over it writes every word it reads.
class BigramCopyModel final : public ShadowModel {
 public:
  BigramCopyModel(const CharCodec& codec, std::vector<std::vector<float>> table)
      : ShadowModel(codec.vocab_size()), codec_(codec), table_(std::move(table)) {}

 private:
  std::vector<float> row_logits(const Rows& sh, const model::BatchToken& t) const override {
    if (t.group == model::Group::Source) return table_[static_cast<size_t>(t.id)];
    const VisibleSource src = visible_source(codec_, sh, t);
    std::vector<int32_t> translation;
    for (size_t w = 0; w < src.words.size(); ++w)
      append_target_word(codec_, word_text(codec_, src.words[w]), w, translation);
    std::vector<float> row(static_cast<size_t>(config().n_vocab), 0.0f);
    row[static_cast<size_t>(next_copied_token(t, translation))] = 10.0f;
    return row;
  }

  const CharCodec& codec_;
  std::vector<std::vector<float>> table_;
};

// All zero, except that after the character 'z' (the plain and the word-start token) '.' has logit `peak`.
std::vector<std::vector<float>> peaked_table(const CharCodec& codec, float peak) {
  const auto v = static_cast<size_t>(codec.vocab_size());
  std::vector<std::vector<float>> t(v, std::vector<float>(v, 0.0f));
  for (bool start : {false, true})
    t[static_cast<size_t>(codec.char_id('z', start))][codec.char_id('.', false)] = peak;
  return t;
}

std::vector<bool> decide_all(model::ForwardModel& model, const CharCodec& codec, double bias,
                             const std::vector<std::string>& words, bool lookahead) {
  auto ends = stream::SentenceEndModel::build(model, codec);
  EXPECT_TRUE(ends.ok()) << ends.error().message();
  stream::SentenceEndDetector d(model, codec, *ends, 1000, bias);
  std::vector<bool> out;  // out[i]: a sentence ends before words[i + 1]
  EXPECT_TRUE(d.feed(words[0]).ok());
  for (size_t i = 1; i < words.size(); ++i) {
    std::optional<std::string_view> after;
    if (lookahead && i + 1 < words.size()) after = words[i + 1];
    auto e = d.ends_before(words[i], after);
    EXPECT_TRUE(e.ok()) << e.error().message();
    out.push_back(e.ok() && *e);
  }
  return out;
}

// By hand, with V = 67 tokens and the end marks . ! ? (each as a plain and a word-start token: 6 ids): after
// a word ending in 'z' the row has '.' at e^L and the 66 others at 1, so
//   log P(end mark | context) = log(e^L + 5) − log(e^L + 66),  log P(next | context) = −log(e^L + 66),
//   log P(next | prompt) = −log 67 (the prompt's row is flat),
// and the score "ends" − "goes on" is log(e^L + 5) − log 67 = 8.0017 − 4.2047 = 3.797 for L = 8. After any
// other word every row is flat: log(6/67) − log 67 + log 67 = −2.413. With one word of lookahead, the rest
// of the word and the next word's first token add the same terms to both sides: a row depends only on the
// character, and the word-start and the plain token of a character have the same row.
TEST(SentenceEnds, DecidesByTheDerivedScoreAgainstTheBias) {
  CharCodec codec;
  BigramCopyModel model(codec, peaked_table(codec, 8.0f));
  const std::vector<std::string> words = {"the", "quiz", "was", "hard", "we", "buzz", "off", "now"};
  // Ends after "quiz" and "buzz": before words[2] and words[6], i.e. out[1] and out[5].
  const std::vector<bool> after_z = {false, true, false, false, false, true, false};
  for (bool lookahead : {false, true}) {
    SCOPED_TRACE(lookahead ? "lookahead" : "one word");
    EXPECT_EQ(decide_all(model, codec, 0.0, words, lookahead), after_z);
    EXPECT_EQ(decide_all(model, codec, 3.79, words, lookahead), after_z);               // 3.797 > 3.79
    EXPECT_EQ(decide_all(model, codec, 3.80, words, lookahead), std::vector<bool>(7));  // 3.797 < 3.80
    // −2.413 > −2.42: everywhere.
    EXPECT_EQ(decide_all(model, codec, -2.42, words, lookahead), std::vector<bool>(7, true));
  }
}

// The two explanations computed directly from the table (a second implementation): log-softmax rows, the
// context's last token, the segment restarting at each end found.
struct Reference {
  const CharCodec& codec;
  const std::vector<std::vector<float>>& table;
  double lp(int32_t row, int32_t id) const {
    const auto& r = table[static_cast<size_t>(row)];
    double mx = r[0];
    for (float x : r) mx = std::max(mx, static_cast<double>(x));
    double s = 0;
    for (float x : r) s += std::exp(x - mx);
    return r[static_cast<size_t>(id)] - mx - std::log(s);
  }
  // Σ over the word's tokens, the first read from row `before`.
  double word_lp(int32_t before, const std::vector<int32_t>& ids) const {
    double s = lp(before, ids[0]);
    for (size_t i = 1; i < ids.size(); ++i) s += lp(ids[i - 1], ids[i]);
    return s;
  }
  std::vector<int32_t> enc(const std::string& w, bool first) const {
    return *codec.encode(stream::SegmentKind::SourceWord, w, first);
  }
  std::vector<bool> decide_all(const std::vector<std::string>& words, bool lookahead, double bias) const {
    std::vector<bool> out;
    int32_t last = enc(words[0], true).back();
    for (size_t i = 1; i < words.size(); ++i) {
      double end_mass = 0;
      for (char m : std::string(".!?"))
        for (bool start : {false, true}) end_mass += std::exp(lp(last, codec.char_id(m, start)));
      const auto on = enc(words[i], false), fresh = enc(words[i], true);
      double ends = std::log(end_mass), goes = 0;
      if (lookahead && i + 1 < words.size()) {
        const int32_t then = enc(words[i + 1], false)[0];
        ends += word_lp(CharCodec::kPrompt, fresh) + lp(fresh.back(), then);
        goes += word_lp(last, on) + lp(on.back(), then);
      } else {
        ends += lp(CharCodec::kPrompt, fresh[0]);
        goes += lp(last, on[0]);
      }
      const bool end = ends - goes > bias;
      out.push_back(end);
      last = end ? fresh.back() : on.back();
    }
    return out;
  }
};

TEST(SentenceEnds, MatchesADirectComputationOnARandomTable) {
  CharCodec codec;
  const auto v = static_cast<size_t>(codec.vocab_size());
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<std::vector<float>> table(v, std::vector<float>(v));
  for (auto& row : table)
    for (float& x : row) x = normal(rng);
  BigramCopyModel model(codec, table);
  const Reference ref{codec, table};
  std::vector<std::string> words;
  std::uniform_int_distribution<int> letter(0, 25), length(1, 5);
  for (int i = 0; i < 120; ++i) {
    std::string w;
    for (int n = length(rng); n > 0; --n) w += static_cast<char>('a' + letter(rng));
    words.push_back(w);
  }
  for (bool lookahead : {false, true}) {
    for (double bias : {-2.0, 0.0, 2.0}) {
      SCOPED_TRACE(std::string(lookahead ? "lookahead" : "one word") + ", bias " + std::to_string(bias));
      const std::vector<bool> expected = ref.decide_all(words, lookahead, bias);
      // Both kinds of decision occur, so the comparison is not trivially all-false or all-true.
      if (bias == 0.0) {
        EXPECT_GT(std::count(expected.begin(), expected.end(), true), 5);
        EXPECT_GT(std::count(expected.begin(), expected.end(), false), 5);
      }
      EXPECT_EQ(decide_all(model, codec, bias, words, lookahead), expected);
    }
  }
}

TEST(SentenceEnds, RejectsAModelFromElsewhereAndANonFiniteBias) {
  CharCodec codec;
  BigramCopyModel model(codec, peaked_table(codec, 8.0f)), other(codec, peaked_table(codec, 8.0f));
  auto prompt = stream::PromptCache::build(other, codec);
  ASSERT_TRUE(prompt.ok());
  EXPECT_FALSE(stream::SentenceEndModel::build(model, codec, *prompt).ok());
  auto ends = stream::SentenceEndModel::build(model, codec);
  ASSERT_TRUE(ends.ok());
  stream::SessionOptions so;
  so.continuous = true;
  so.sentence_ends = *ends;
  EXPECT_FALSE(stream::Session::create(other, codec, so).ok());
  EXPECT_TRUE(stream::Session::create(model, codec, so).ok());
  so.sentence_end_bias = std::nan("");
  EXPECT_FALSE(stream::Session::create(model, codec, so).ok());
}

struct Segmented {
  std::vector<std::string> words;
  std::vector<int> segment_sizes;  // words written per segment
  std::vector<int> delays;         // each word's stream_delay
  int words_read = 0;
};

Segmented run_unpunctuated(const std::vector<std::string>& words, int ends_after, int k,
                           bool lookahead = true) {
  CharCodec codec;
  BigramCopyModel model(codec, peaked_table(codec, 8.0f));
  stream::SessionOptions so;
  so.k = k;
  so.continuous = true;
  so.sentence_ends = *stream::SentenceEndModel::build(model, codec);
  so.model_sentence_ends_after = ends_after;
  so.sentence_end_lookahead = lookahead;
  auto s = stream::Session::create(model, codec, so);
  EXPECT_TRUE(s.ok()) << s.error().message();
  Segmented r;
  if (!s.ok()) return r;
  int in_segment = 0;
  drive_live(
      **s, words,
      [&](const stream::Event& e) {
        if (e.kind == EventKind::Word) {
          r.words.push_back(e.word);
          r.delays.push_back(e.stream_delay);
          ++in_segment;
        } else if (e.kind == EventKind::SegmentEnd) {
          r.segment_sizes.push_back(in_segment);
          in_segment = 0;
        }
      },
      100000);
  EXPECT_EQ(in_segment, 0);  // the last segment ends with a SegmentEnd too, before Finished
  r.words_read = (*s)->stream_words_read();
  return r;
}

// The session asks the model before each word once `ends_after` words in a row held no sentence end: with
// 0, before every word but the first, so the segments end after each word ending in 'z' (derivation above);
// with 4, the first question is before the 5th word, so the end after "quiz" (word 2) is not seen.
TEST(SentenceEnds, ContinuousSessionEndsSegmentsWhereTheModelSaysAndReadsEveryWord) {
  const std::vector<std::string> words = {"the",  "quiz", "was", "hard", "we",
                                          "buzz", "off",  "now", "fizz", "a"};
  for (int k : {1, 3, 20}) {
    SCOPED_TRACE("k " + std::to_string(k));
    Segmented all = run_unpunctuated(words, 0, k);
    EXPECT_EQ(all.words, words);
    EXPECT_EQ(all.words_read, static_cast<int>(words.size()));
    EXPECT_EQ(all.segment_sizes, (std::vector<int>{2, 4, 3, 1}));
    Segmented late = run_unpunctuated(words, 4, k);
    EXPECT_EQ(late.words, words);
    EXPECT_EQ(late.words_read, static_cast<int>(words.size()));
    EXPECT_EQ(late.segment_sizes, (std::vector<int>{6, 3, 1}));
  }
}

// Delays count what a decision looked at. By hand, wait-1 over "the quiz was hard", one word pushed per
// NeedSource, the model asked before every word but the first. With lookahead: "the" after 1 word; before
// reading "quiz" the session waits for "was" (3 words seen: no end after "the"), so "quiz" has delay 3;
// before "was" it waits for "hard" (4 seen): a sentence ends after "quiz", and the next segment's "was" and
// "hard" have delay 4 (the stream's end comes before a lookahead for "hard", which is decided on itself).
// Without lookahead each decision sees only the word it is before: delays 1, 2, 3, 4, the words read.
TEST(SentenceEnds, DelaysCountTheWordsTheDecisionLookedAt) {
  const std::vector<std::string> words = {"the", "quiz", "was", "hard"};
  Segmented ahead = run_unpunctuated(words, 0, 1, true);
  EXPECT_EQ(ahead.words, words);
  EXPECT_EQ(ahead.segment_sizes, (std::vector<int>{2, 2}));
  EXPECT_EQ(ahead.delays, (std::vector<int>{1, 3, 4, 4}));
  Segmented one = run_unpunctuated(words, 0, 1, false);
  EXPECT_EQ(one.segment_sizes, (std::vector<int>{2, 2}));
  EXPECT_EQ(one.delays, (std::vector<int>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace gpstream::testing
