// BPE trainer: merges derived by hand on tiny inputs; determinism and parity with the Hugging Face
// oracle on a tokenizer trained from the first 3000 en-fr training pairs (tests/tokenizer/data/trained/,
// made by scripts/make-tokenizer-fixtures: gpstream trains, the oracle encodes the dev lines).
#include "tokenizer/bpe_trainer.h"

#include <algorithm>

#include "test_data.h"
#include "tokenizer/prompt_template.h"

namespace gpstream::tokenizer {
namespace {

using namespace testing;

BpeTrainerOptions tiny_options(size_t merges, uint64_t min_frequency) {
  BpeTrainerOptions o;
  o.special_tokens = {"<s>"};
  o.vocab_size = 1 + 256 + merges;
  o.min_frequency = min_frequency;
  o.pre_tokenizer = TrainerPreTokenizer::Gpt2;
  return o;
}

// Words "abab", "Ġabab", "Ġab": (a,b) occurs 5 times -> "ab"; then (Ġ,ab) and (ab,ab) both occur twice and
// the smaller pair of ids wins (Ġ is a byte symbol, "ab" a new one) -> "Ġab"; then (ab,ab) and (Ġab,ab)
// once each -> "abab".
TEST(BpeTrainer, MergesByHand) {
  BpeTrainer t(tiny_options(3, 1));
  t.add_text("abab abab ab");
  auto j = t.train();
  ASSERT_TRUE(j.ok()) << j.error().message();
  EXPECT_EQ((*j)["model"]["merges"].dump(), R"([["a","b"],["Ġ","ab"],["ab","ab"]])");
  EXPECT_EQ((*j)["model"]["vocab"]["<s>"], 0);
  EXPECT_EQ((*j)["model"]["vocab"]["abab"], 259);
  auto tok = Tokenizer::from_json_text((*j).dump());
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  EXPECT_EQ(tok->encode("abab ab"), (std::vector<int32_t>{259, 258}));
}

TEST(BpeTrainer, MinFrequencyStops) {
  BpeTrainer t(tiny_options(10, 3));
  t.add_text("abab abab ab");
  BpeTrainer::Stats stats;
  auto j = t.train(&stats);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(stats.merges, 1u);  // only (a,b) occurs 3 times or more
}

TEST(BpeTrainer, RejectsBadOptions) {
  BpeTrainerOptions o = tiny_options(0, 1);
  o.vocab_size = 100;
  EXPECT_FALSE(BpeTrainer(o).train().ok());
  o = tiny_options(1, 1);
  o.eos_token = "</s>";  // not a special token
  EXPECT_FALSE(BpeTrainer(o).train().ok());
}

BpeTrainerOptions fixture_options() {
  BpeTrainerOptions o;
  o.special_tokens = kGpstreamSpecialTokens;
  o.vocab_size = 1000;
  o.min_frequency = 2;
  o.pre_tokenizer = TrainerPreTokenizer::Llama3;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  o.pad_token = "<pad>";
  return o;
}

TEST(BpeTrainer, TrainedTokenizerMatchesOracle) {
  // Retraining reproduces the committed tokenizer.json byte for byte.
  BpeTrainer t(fixture_options());
  auto lines = split_lines(read_text(corpus_dir() + "/en-fr.train.tsv"));
  ASSERT_GE(lines.size(), 3000u);
  for (size_t i = 0; i < 3000; ++i) {
    size_t tab = lines[i].find('\t');
    t.add_text(lines[i].substr(0, tab));
    t.add_text(lines[i].substr(tab + 1));
  }
  auto j = t.train();
  ASSERT_TRUE(j.ok()) << j.error().message();
  std::string committed = read_text(data_dir() + "/trained/tokenizer.json");
  std::string got = j->dump() + "\n";
  size_t diff = std::mismatch(got.begin(), got.end(), committed.begin(), committed.end()).first - got.begin();
  EXPECT_TRUE(got == committed)
      << "the trainer's output differs from tests/tokenizer/data/trained/tokenizer.json at byte " << diff
      << " (rerun scripts/make-tokenizer-fixtures if intended): \""
      << got.substr(diff > 40 ? diff - 40 : 0, 80) << "\"";

  // The oracle's ids for the first 300 en-fr dev pairs (both sides) on the committed file.
  auto tok = Tokenizer::load(data_dir() + "/trained");
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  auto dev = split_lines(read_text(corpus_dir() + "/en-fr.dev.tsv"));
  auto want = split_lines(read_text(data_dir() + "/trained/en-fr.dev.ids"));
  ASSERT_EQ(want.size(), 600u);
  for (size_t i = 0; i < 300; ++i) {
    size_t tab = dev[i].find('\t');
    for (int side = 0; side < 2; ++side) {
      std::string text = side == 0 ? dev[i].substr(0, tab) : dev[i].substr(tab + 1);
      std::vector<int32_t> ids = tok->encode(text);
      EXPECT_EQ(show_ids(ids), show_ids(parse_ids(want[2 * i + side]))) << text;
      EXPECT_EQ(tok->decode(ids), text);
    }
  }
}

}  // namespace
}  // namespace gpstream::tokenizer
