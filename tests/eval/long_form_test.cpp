// Long-form evaluation: hand-derived resegmentations and StreamLAAL values (derivations in the comments), the
// tie rule, empty segments, hypotheses shorter and longer than the references, the size limit, the run-file
// parser's errors, and the golden files of tests/eval/gen_long_form_golden.py — a separate Python
// implementation of the definitions (segment-by-segment DP, every cut vector enumerated on small runs) — in
// tests/eval/data/long_form/: five hand-made runs and 300 seeded random ones with many ties.
#include "eval/long_form.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpstream::eval {
namespace {

const std::string kDataDir = std::string(GPSTREAM_SOURCE_DIR) + "/tests/eval/data/long_form/";

std::vector<std::vector<std::string>> split_all(const std::vector<std::string>& sentences) {
  std::vector<std::vector<std::string>> out;
  for (const auto& s : sentences) out.push_back(long_form_words(s));
  return out;
}

std::vector<size_t> cuts_of(const std::string& hyp, const std::vector<std::string>& refs) {
  auto c = resegment_cuts(long_form_words(hyp), split_all(refs));
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c.ok() ? *c : std::vector<size_t>{};
}

TEST(LongFormWords, SplitsOnAsciiWhitespaceOnly) {
  EXPECT_EQ(long_form_words("  a\tB\n\nc.\r\v\fd  "), (std::vector<std::string>{"a", "B", "c.", "d"}));
  EXPECT_TRUE(long_form_words(" \t ").empty());
  // U+00A0 (no-break space) is not a separator.
  EXPECT_EQ(long_form_words("a\xc2\xa0"
                            "b c")
                .size(),
            2u);
}

// References "the cat sleeps ." (|X| = 4 source words, 2000 ms) and "it rains ." (|X| = 3, 1500 ms);
// hypothesis "the cat sleeps it is raining ." (7 words). Edit distance of each cut c (words before it go to
// sentence 1):
//   c = 2: "the cat" 2 deletions + "sleeps it is raining ." vs "it rains ." 3 (insert sleeps, is→rains,
//   insert
//          raining) = 5
//   c = 3: "the cat sleeps" 1 deletion + "it is raining ." 2 (is→rains, insert raining) = 3
//   c = 4: "the cat sleeps it" 1 (it→.) + "is raining ." 2 (is→it, raining→rains) = 3
//   c = 5: "the cat sleeps it is" 2 (it→., insert is) + "raining ." 2 = 4
//   c ≤ 1 or c ≥ 6 cost more (at least 3 + 3). A tie between 3 and 4: the earliest, c = 3.
// StreamLAAL (word delays 1 2 4 | 5 6 7 7):
//   sentence 1: s = 0, d' = 1 2 4, |Y| = 3, |Y*| = 4, step |X|/max = 4/4 = 1; τ = 3 (4 ≥ 4):
//               (1 + (2 − 1) + (4 − 2)) / 3 = 4/3
//   sentence 2: s = 4, d' = 1 2 3 3, |Y| = 4, |Y*| = 3, step 3/4; τ = 3 (3 ≥ 3):
//               (1 + (2 − 0.75) + (3 − 1.5)) / 3 = 3.75/3 = 1.25
//   StreamLAAL = (4/3 + 1.25) / 2 = 1.2916…
// StreamLAAL_CA (elapsed 600 1100 2100 | 2600 3100 3600 3650 ms, spans 2000 and 1500 ms):
//   sentence 1: step 2000/4 = 500; τ = 3 (2100 ≥ 2000): (600 + 600 + 1100) / 3 = 766.67
//   sentence 2: s = 2000, d' = 600 1100 1600 1650; step 1500/4 = 375; τ = 3: (600 + 725 + 850) / 3 = 725
//   StreamLAAL_CA = 745.83…
TEST(LongForm, HandDerivedTwoSentences) {
  const std::vector<std::string> refs = {"the cat sleeps .", "it rains ."};
  const auto hyp = long_form_words("the cat sleeps it is raining .");
  auto cuts = resegment_cuts(hyp, split_all(refs));
  ASSERT_TRUE(cuts.ok()) << cuts.error().message();
  EXPECT_EQ(*cuts, (std::vector<size_t>{0, 3, 7}));
  auto segments = resegment(hyp, refs);
  ASSERT_TRUE(segments.ok());
  EXPECT_EQ(*segments, (std::vector<std::string>{"the cat sleeps", "it is raining ."}));

  const std::vector<double> delays = {1, 2, 4, 5, 6, 7, 7};
  const std::vector<double> spans = {4, 3};
  const std::vector<int64_t> ref_lengths = {4, 3};
  auto laal = stream_laal(delays, *cuts, spans, ref_lengths);
  ASSERT_TRUE(laal.ok()) << laal.error().message();
  EXPECT_DOUBLE_EQ(*laal->per_sentence[0], 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(*laal->per_sentence[1], 1.25);
  EXPECT_DOUBLE_EQ(*laal->mean, (4.0 / 3.0 + 1.25) / 2);
  EXPECT_EQ(laal->empty_sentences, 0u);

  const std::vector<double> elapsed = {600, 1100, 2100, 2600, 3100, 3600, 3650};
  const std::vector<double> spans_ms = {2000, 1500};
  auto ca = stream_laal(elapsed, *cuts, spans_ms, ref_lengths);
  ASSERT_TRUE(ca.ok());
  EXPECT_DOUBLE_EQ(*ca->per_sentence[0], 2300.0 / 3);
  EXPECT_DOUBLE_EQ(*ca->per_sentence[1], 725.0);
  EXPECT_DOUBLE_EQ(*ca->mean, (2300.0 / 3 + 725.0) / 2);
}

// Two (or more) cuts with the same total: the earliest wins.
TEST(LongForm, TiesGoToTheEarliestBoundary) {
  // "a x d" against "a b" | "c d": c = 1: "a" 1 + "x d" 1 = 2; c = 2: "a x" 1 + "d" 1 = 2; c = 0 and 3: 4.
  EXPECT_EQ(cuts_of("a x d", {"a b", "c d"}), (std::vector<size_t>{0, 1, 3}));
  // "x" against "a" | "b": c = 0 ("" 1 + "x"→b 1) and c = 1 (x→a 1 + "" 1) tie at 2: c = 0.
  EXPECT_EQ(cuts_of("x", {"a", "b"}), (std::vector<size_t>{0, 0, 1}));
  // An inserted word between two matched sentences costs 1 on either side: it opens the second segment.
  EXPECT_EQ(cuts_of("a b z c d", {"a b", "c d"}), (std::vector<size_t>{0, 2, 5}));
  // Three sentences, every word wrong: "x y" against "a" | "b" | "c" costs at least 3 (2 substitutions + 1
  // deletion): cuts (0, 1), (1, 1) and (1, 2) cost 3, (0, 0) and (0, 2) cost 4 (two empty segments + "x y"
  // against one word). The earliest optimal vector is (0, 1).
  EXPECT_EQ(cuts_of("x y", {"a", "b", "c"}), (std::vector<size_t>{0, 0, 1, 2}));
}

// "one two four five six" against "one two" | "three" | "four five six": cuts (2, 2) cost 1 (the middle
// sentence's deletion); the middle segment is empty, left out of StreamLAAL and counted. Audio units (ms):
// sentence 1: d' = 400 1000, |X| = 1000, step 1000/2 = 500, τ = 2: (400 + 500) / 2 = 450;
// sentence 3: s = 1800, d' = 400 800 1200, |X| = 1200, step 400, τ = 3: (400 + 400 + 400) / 3 = 400.
TEST(LongForm, EmptySegmentIsCountedAndLeftOut) {
  const auto hyp = long_form_words("one two four five six");
  const std::vector<std::string> refs = {"one two", "three", "four five six"};
  auto cuts = resegment_cuts(hyp, split_all(refs));
  ASSERT_TRUE(cuts.ok());
  EXPECT_EQ(*cuts, (std::vector<size_t>{0, 2, 2, 5}));
  const std::vector<double> delays = {400, 1000, 2200, 2600, 3000};
  const std::vector<double> spans = {1000, 800, 1200};
  const std::vector<int64_t> ref_lengths = {2, 1, 3};
  auto laal = stream_laal(delays, *cuts, spans, ref_lengths);
  ASSERT_TRUE(laal.ok());
  EXPECT_EQ(laal->empty_sentences, 1u);
  EXPECT_FALSE(laal->per_sentence[1].has_value());
  EXPECT_DOUBLE_EQ(*laal->per_sentence[0], 450.0);
  EXPECT_DOUBLE_EQ(*laal->per_sentence[2], 400.0);
  EXPECT_DOUBLE_EQ(*laal->mean, 425.0);
  // No hypothesis at all: every sentence is empty and there is no mean.
  auto none = stream_laal({}, std::vector<size_t>{0, 0, 0, 0}, spans, ref_lengths);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->empty_sentences, 3u);
  EXPECT_FALSE(none->mean.has_value());
  EXPECT_EQ(cuts_of("", {"a", "b"}), (std::vector<size_t>{0, 0, 0}));
}

// Longer: "A A b c c d x e e" against "A b c" | "d e": c = 4 ("A A b c" 1 + "c d x e e" 3) and c = 5
// ("A A b c c" 2 + "d x e e" 2) tie at 4; c = 3 costs 2 + 4. Earliest: 4. Case-sensitive: "a" ≠ "A".
// Shorter: "s" against "p q" | "r s" | "t u": the word goes to the sentence it matches, cuts (0, 1).
TEST(LongForm, LongerAndShorterHypotheses) {
  EXPECT_EQ(cuts_of("A A b c c d x e e", {"A b c", "d e"}), (std::vector<size_t>{0, 4, 9}));
  EXPECT_EQ(cuts_of("a b c", {"A b c", "d e"}), (std::vector<size_t>{0, 3, 3}));
  EXPECT_EQ(cuts_of("s", {"p q", "r s", "t u"}), (std::vector<size_t>{0, 0, 1, 1}));
}

TEST(LongForm, RefusesTooManyCellsAndBadInput) {
  // (16384 + 1)² > 2^28 cells.
  const std::vector<std::string> hyp(16384, "w");
  const std::vector<std::vector<std::string>> refs = {std::vector<std::string>(16384, "w")};
  auto big = resegment_cuts(hyp, refs);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message().find("alignment cells"), std::string::npos) << big.error().message();
  // (16383 + 1)·(16383 + 1) = 2^28 is allowed.
  const std::vector<std::string> hyp_ok(16383, "w");
  const std::vector<std::vector<std::string>> refs_ok = {std::vector<std::string>(16383, "w")};
  auto ok = resegment_cuts(hyp_ok, refs_ok);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(*ok, (std::vector<size_t>{0, 16383}));

  EXPECT_FALSE(resegment_cuts(hyp_ok, {}).ok());
  EXPECT_FALSE(resegment_cuts(hyp_ok, {{"a"}, {}}).ok());
  const std::vector<double> d = {1.0};
  const std::vector<double> zero_span = {0.0};
  const std::vector<int64_t> one = {1};
  EXPECT_FALSE(stream_laal(d, std::vector<size_t>{0, 1}, zero_span, one).ok());
  const std::vector<double> span = {1.0};
  EXPECT_FALSE(stream_laal(d, std::vector<size_t>{0, 2}, span, one).ok());
}

std::string parse_error(const std::string& text) {
  auto r = parse_long_form_run(text, "run.json");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.error().message();
}

TEST(LongFormRunFile, ErrorsNameTheKey) {
  const std::string s = R"({"source_length": 2, "reference": "a b"})";
  const std::string h = R"("hypothesis": {"words": ["a"], "delays": [1]})";
  auto good =
      parse_long_form_run(R"({"source_unit": "word", "sentences": [)" + s + "], " + h + "}", "run.json");
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_EQ(good->words, std::vector<std::string>{"a"});

  auto has = [](const std::string& msg, const std::string& what) {
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  has(parse_error(R"({"source_unit": "words", "sentences": [)" + s + "], " + h + "}"), "source_unit");
  has(parse_error(R"({"source_unit": "word", "sentences": [], )" + h + "}"), "sentences");
  has(parse_error(R"({"source_unit": "word", "sentences": [{"source_length": 2.5, "reference": "a"}], )" + h +
                  "}"),
      "sentences[0].source_length");
  has(parse_error(R"({"source_unit": "word", "sentences": [{"source_length": 2, "reference": " "}], )" + h +
                  "}"),
      "sentences[0].reference");
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s +
                  R"(], "hypothesis": {"words": ["a b"], )"
                  R"("delays": [1]}})"),
      "hypothesis.words[0]");
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s +
                  R"(], "hypothesis": {"words": ["a", "b"], )"
                  R"("delays": [1]}})"),
      "hypothesis.delays");
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s +
                  R"(], "hypothesis": {"words": ["a", "b"], )"
                  R"("delays": [2, 1]}})"),
      "hypothesis.delays[1]");
  // A delay past the end of the source (2 words).
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s +
                  R"(], "hypothesis": {"words": ["a"], )"
                  R"("delays": [3]}})"),
      "hypothesis.delays[0]");
  // Elapsed times with word units need every sentence's span in ms.
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s +
                  R"(], "hypothesis": {"words": ["a"], )"
                  R"("delays": [1], "elapsed": [5]}})"),
      "source_ms");
  has(parse_error(
          R"({"source_unit": "word", "sentences": [{"source_length": 1, "source_ms": 300, "reference": )"
          R"("a"}, )" +
          s + "], " + h + "}"),
      "sentences[1].source_ms");
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s + "], " + h + R"(, "extra": 1})"), "extra");
  has(parse_error(R"({"source_unit": "word", "sentences": [)" + s + "]}"), "hypothesis");
  has(parse_error("[1, 2]"), "run.json");
  // More reference words in all than kMaxLongFormWords.
  std::string many;
  for (size_t i = 0; i <= kMaxLongFormWords; ++i) many += "a ";
  has(parse_error(R"({"source_unit": "word", "sentences": [{"source_length": 1, "reference": ")" + many +
                  R"("}], )" + h + "}"),
      "sentences[0].reference");
}

void expect_matches_golden(const nlohmann::json& input, const nlohmann::json& expected,
                           const std::string& what) {
  SCOPED_TRACE(what + ": " + input.dump());
  auto run = parse_long_form_run(input.dump(), what);
  ASSERT_TRUE(run.ok()) << run.error().message();
  auto scores = score_long_form(*run);
  ASSERT_TRUE(scores.ok()) << scores.error().message();
  EXPECT_EQ(scores->cuts, expected["cuts"].get<std::vector<size_t>>());
  EXPECT_EQ(scores->segments, expected["segments"].get<std::vector<std::string>>());
  EXPECT_EQ(scores->laal.empty_sentences, expected["empty_sentences"].get<size_t>());
  auto compare = [](const StreamLaal& got, const nlohmann::json& per, const nlohmann::json& mean) {
    ASSERT_EQ(got.per_sentence.size(), per.size());
    for (size_t i = 0; i < per.size(); ++i) {
      ASSERT_EQ(got.per_sentence[i].has_value(), !per[i].is_null()) << "sentence " << i;
      if (!per[i].is_null()) {
        EXPECT_NEAR(*got.per_sentence[i], per[i].get<double>(), 1e-9) << "sentence " << i;
      }
    }
    ASSERT_EQ(got.mean.has_value(), !mean.is_null());
    if (got.mean) {
      EXPECT_NEAR(*got.mean, mean.get<double>(), 1e-9);
    }
  };
  compare(scores->laal, expected["laal"], expected["StreamLAAL"]);
  ASSERT_EQ(scores->laal_ca.has_value(), expected.contains("laal_ca"));
  if (scores->laal_ca) compare(*scores->laal_ca, expected["laal_ca"], expected["StreamLAAL_CA"]);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(LongFormGolden, HandMadeRuns) {
  for (const char* name : {"two_sentences", "tie", "empty_middle", "longer", "shorter"}) {
    const std::string base = kDataDir + name;
    expect_matches_golden(read_json(base + ".input.json"), read_json(base + ".expected.json"), name);
  }
}

TEST(LongFormGolden, RandomRuns) {
  std::ifstream in(kDataDir + "random.jsonl");
  ASSERT_TRUE(in) << kDataDir << "random.jsonl";
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    expect_matches_golden(j["input"], j["expected"], "random.jsonl:" + std::to_string(++n));
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) break;
  }
  EXPECT_EQ(n, 300u);
}

// BLEU and chrF are sacreBLEU's corpus scores of the segments against the references.
TEST(LongForm, QualityScoresAreThoseOfTheSegments) {
  auto run = parse_long_form_run(read_json(kDataDir + "two_sentences.input.json").dump(), "two_sentences");
  ASSERT_TRUE(run.ok()) << run.error().message();
  auto scores = score_long_form(*run);
  ASSERT_TRUE(scores.ok()) << scores.error().message();
  const std::vector<std::string> segments = {"the cat sleeps", "it is raining ."};
  const std::vector<std::vector<std::string>> refs = {{"the cat sleeps .", "it rains ."}};
  auto bleu = corpus_bleu(segments, refs, BleuOptions{});
  auto chrf = corpus_chrf(segments, refs, ChrfOptions{});
  ASSERT_TRUE(bleu.ok() && chrf.ok());
  EXPECT_EQ(scores->bleu.score.score, bleu->score.score);
  EXPECT_EQ(scores->chrf.score, chrf->score);
  EXPECT_GT(scores->bleu.score.score, 0.0);
}

}  // namespace
}  // namespace gpstream::eval
