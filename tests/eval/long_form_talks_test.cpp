// Long-form runs (eval/long_form_talks.h) with the scripted copy model: punctuation stripping by hand,
// talk grouping by hand, a talk's words, delays (wait-k across the continuous session's segments, derived by
// hand) and StreamLAAL; an unpunctuated talk longer than the segment limit is read to its last word; the run
// file reads back as written; several runs pool into one corpus score.
#include "eval/long_form_talks.h"

#include <gtest/gtest.h>

#include "../stream/copy_model.h"

namespace gpstream {
namespace {

TEST(LongFormTalks, StripPunctuationTakesOnlyTheWordsEnds) {
  EXPECT_EQ(eval::strip_punctuation("Hello, world!"), "Hello world");
  EXPECT_EQ(eval::strip_punctuation("don't (stop) e-mail Ctrl+F."), "don't stop e-mail Ctrl+F");
  // "..." and "—" have no letter, mark or digit: dropped; «» and ¿ are punctuation; % and $ are symbols,
  // taken off the ends too; é (a letter) and 2 (a digit) stay.
  EXPECT_EQ(eval::strip_punctuation("... «Écoute» — ¿qué? 50% $5"), "Écoute qué 50 5");
  EXPECT_EQ(eval::strip_punctuation("  \t "), "");
}

TEST(LongFormTalks, BuildTalksByHand) {
  // Source words 3, 2, 4, 1; at 1 word/s a talk of at least 5/60 minute needs 5 words.
  const std::vector<eval::TestPair> pairs = {{"a b c", "x"}, {"d e", "y"}, {"f g h i", "z"}, {"j", "w"}};
  const double minutes = 5.0 / 60.0;
  eval::Talks t = eval::build_talks(pairs, minutes, 1.0);
  ASSERT_EQ(t.talks.size(), 2u);
  EXPECT_EQ(t.talks[0].size(), 2u);  // 3 + 2 = 5
  EXPECT_EQ(t.talks[1].size(), 2u);  // 4 + 1 = 5
  EXPECT_EQ(t.skipped, 0u);
  // Without the last pair the second talk has 4 words, short of 5: it joins the first.
  t = eval::build_talks({pairs[0], pairs[1], pairs[2]}, minutes, 1.0);
  ASSERT_EQ(t.talks.size(), 1u);
  EXPECT_EQ(t.talks[0].size(), 3u);
  // A pair with no source word or no reference word is left out and counted.
  t = eval::build_talks({{" ", "x"}, {"a", ""}, {"a b", "x"}}, minutes, 1.0);
  ASSERT_EQ(t.talks.size(), 1u);
  EXPECT_EQ(t.talks[0].size(), 1u);
  EXPECT_EQ(t.skipped, 2u);
}

TEST(LongFormTalks, TalkDelaysFollowWaitKAcrossSegments) {
  testing::CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so;
  so.k = 2;
  const std::vector<eval::TestPair> talk = {{"a b c.", "a b c."}, {"d e.", "d e."}};
  auto run = eval::translate_talk(model, codec, so, talk, 2.5);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->words, (std::vector<std::string>{"a", "b", "c.", "d", "e."}));
  // By hand: the session cuts the stream after "c." (a sentence end). Segment 1 (3 words): word j after
  // min(2 + j − 1, 3 + 1) units, the end marker counted as a unit but not as a word read: 2, 3, 3 words.
  // Segment 2 starts after 3 words and reads min(2 + j − 1, 2 + 1) units: 3 + 2, 3 + 2.
  EXPECT_EQ(run->delays, (std::vector<double>{2, 3, 3, 5, 5}));
  EXPECT_EQ(run->source_lengths, (std::vector<double>{3, 2}));
  EXPECT_EQ(run->source_ms, (std::vector<double>{1200, 800}));  // 400 ms a word at 2.5 words/s
  ASSERT_TRUE(run->elapsed.has_value());
  for (size_t j = 0; j < run->words.size(); ++j)
    EXPECT_GE((*run->elapsed)[j], run->delays[j] * 400.0) << "never before the word was heard";
  auto scores = eval::score_long_form(*run);
  ASSERT_TRUE(scores.ok()) << scores.error().message();
  EXPECT_EQ(scores->segments, (std::vector<std::string>{"a b c.", "d e."}));
  // Sentence 1: d' = 2, 3, 3, |X| = 3, |Y*| = 3; τ = 2 (3 ≥ 3): LAAL = ((2 − 0) + (3 − 1)) / 2 = 2.
  // Sentence 2: d' = 5 − 3, 5 − 3 = 2, 2, |X| = 2; τ = 1: LAAL = 2. StreamLAAL = 2.
  ASSERT_TRUE(scores->laal.mean.has_value());
  EXPECT_EQ(*scores->laal.mean, 2.0);
  // Every n-gram matches: 100 up to the few roundings of BLEU's exp/log (4 ulp of 100 ≈ 6e-14).
  EXPECT_NEAR(scores->bleu.score.score, 100.0, 1e-12);
}

TEST(LongFormTalks, AnUnpunctuatedTalkIsReadToItsLastWord) {
  testing::CharCodec codec;
  testing::CopyModel model(codec);
  stream::SessionOptions so;
  so.k = 3;
  // 150 words, no punctuation: longer than two segments of kDefaultMaxSegmentWords (64), so the session
  // cuts the stream twice at the word limit; not one word may be lost at a cut.
  const char* letters = "abcdefghijklmnopqrstuvwxyz";
  std::vector<std::string> words;
  std::vector<eval::TestPair> talk;
  for (int s = 0; s < 10; ++s) {
    std::string sentence;
    for (int j = 0; j < 15; ++j) {
      const int i = s * 15 + j;
      // Two letters a word: a segment's 64 words then take 64 × 3 character tokens, within the session's
      // max_target_tokens (256), which would otherwise end the copy model's translation early.
      const std::string w = {letters[i / 26], letters[i % 26]};
      words.push_back(w);
      sentence += (j ? " " : "") + w;
    }
    talk.push_back({sentence, sentence});
  }
  ASSERT_GT(words.size(), 2u * stream::kDefaultMaxSegmentWords);
  auto run = eval::translate_talk(model, codec, so, talk, 2.5);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->words, words);  // the copy model writes every word it read, once
  ASSERT_FALSE(run->delays.empty());
  EXPECT_EQ(run->delays.back(), 150.0);
  for (size_t j = 0; j < run->delays.size(); ++j) EXPECT_GE(run->delays[j], static_cast<double>(j + 1));
}

TEST(LongFormTalks, RunFileReadsBackAsWritten) {
  eval::LongFormRun run;
  run.source_lengths = {3, 2};
  run.source_ms = {1200, 800.5};
  run.references = {"le \"chat\" dort", "il pleut ."};
  run.words = {"le", "chat", "dort", "il", "pleut"};
  run.delays = {2, 3, 3, 5, 5};
  run.elapsed = std::vector<double>{801.25, 1200, 1300, 2000.125, 2100};
  const std::string text = eval::format_long_form_run(run);
  auto back = eval::parse_long_form_run(text, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << text;
  EXPECT_EQ(back->source_lengths, run.source_lengths);
  EXPECT_EQ(back->source_ms, run.source_ms);
  EXPECT_EQ(back->references, run.references);
  EXPECT_EQ(back->words, run.words);
  EXPECT_EQ(back->delays, run.delays);
  EXPECT_EQ(back->elapsed, run.elapsed);
}

TEST(LongFormTalks, RunsPoolIntoOneCorpusScore) {
  eval::LongFormRun a;
  a.source_lengths = {3};
  a.references = {"a b c"};
  a.words = {"a", "b", "c"};
  a.delays = {1, 2, 3};
  eval::LongFormRun b;
  b.source_lengths = {2, 2};
  b.references = {"d e", "f g"};
  b.words = {"d", "e", "f", "g"};
  b.delays = {2, 2, 4, 4};
  const std::vector<eval::LongFormRun> runs = {a, b};
  auto pooled = eval::score_long_form(runs);
  ASSERT_TRUE(pooled.ok()) << pooled.error().message();
  EXPECT_EQ(pooled->segments, (std::vector<std::string>{"a b c", "d e", "f g"}));
  // Cuts over the words of a then b: 0 | 3 | 3 + 2 | 3 + 4.
  EXPECT_EQ(pooled->cuts, (std::vector<size_t>{0, 3, 5, 7}));
  // By hand: a's sentence: d' = 1, 2, 3, |X| = |Y*| = 3, τ = 3: (1 + (2 − 1) + (3 − 2)) / 3 = 1.
  // b's first: d' = 2, 2, |X| = 2, τ = 1: 2. b's second (s = 2): d' = 2, 2, τ = 1: 2. Mean (1 + 2 + 2) / 3.
  ASSERT_TRUE(pooled->laal.mean.has_value());
  EXPECT_DOUBLE_EQ(*pooled->laal.mean, 5.0 / 3.0);
  EXPECT_FALSE(pooled->laal_ca.has_value()) << "no run has elapsed times";
  // The corpus BLEU of all segments is that of scoring them together.
  auto bleu = eval::corpus_bleu(pooled->segments, {{"a b c", "d e", "f g"}}, {});
  ASSERT_TRUE(bleu.ok());
  EXPECT_EQ(pooled->bleu.score.score, bleu->score.score);
}

}  // namespace
}  // namespace gpstream
