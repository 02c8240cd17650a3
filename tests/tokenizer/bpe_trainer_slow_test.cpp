// The trainer at full size: a 16,000-token vocabulary on all of en-fr train (both columns) in well under
// five minutes; the result loads and round-trips the dev set.
#include <chrono>

#include "test_data.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/prompt_template.h"

namespace gpstream::tokenizer {
namespace {

using namespace testing;

TEST(BpeTrainerSlow, FullEnFrIn16kVocabulary) {
  auto t0 = std::chrono::steady_clock::now();
  BpeTrainerOptions o;
  o.special_tokens = kGpstreamSpecialTokens;
  o.vocab_size = 16000;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  BpeTrainer trainer(o);
  ASSERT_TRUE(trainer.add_file(corpus_dir() + "/en-fr.train.tsv").ok());
  BpeTrainer::Stats stats;
  auto j = trainer.train(&stats);
  ASSERT_TRUE(j.ok()) << j.error().message();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ trainer ] %zu words, %zu distinct, %zu merges in %.1f s\n", stats.words, stats.unique_words,
              stats.merges, secs);
  EXPECT_LT(secs, 300.0);
  EXPECT_EQ(stats.merges, 16000u - 4 - 256);
  auto tok = Tokenizer::from_json_text(j->dump(), trainer.config_json().dump());
  ASSERT_TRUE(tok.ok()) << tok.error().message();
  EXPECT_EQ(tok->vocab_size(), 16000);
  size_t tokens = 0, chars = 0;
  for (const auto& line : split_lines(read_text(corpus_dir() + "/en-fr.dev.tsv"))) {
    auto ids = tok->encode(line);
    EXPECT_EQ(tok->decode(ids), line);
    tokens += ids.size();
    chars += line.size();
  }
  std::printf("[ trainer ] en-fr dev: %.2f bytes per token\n", static_cast<double>(chars) / tokens);
}

}  // namespace
}  // namespace gpstream::tokenizer
