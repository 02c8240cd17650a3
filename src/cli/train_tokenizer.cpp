// `gpstream train-tokenizer -o DIR [--vocab-size N] [--min-frequency F] [--special T]... [--pre-tokenizer P]
//  [--no-nfc] FILE...`: learns a byte-level BPE from text files (one text per line) or .tsv files (every
// column) and writes DIR/tokenizer.json and DIR/tokenizer_config.json (Hugging Face formats).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/prompt_template.h"
#include "util/clock.h"

namespace {

int run_train_tokenizer(int argc, char** argv) {
  using namespace gpstream::tokenizer;
  CLI::App app{"Train a byte-level BPE tokenizer and write a Hugging Face tokenizer.json",
               "gpstream train-tokenizer"};
  std::vector<std::string> files;
  std::string out_dir, pre = "llama3";
  BpeTrainerOptions opt;
  opt.special_tokens = kGpstreamSpecialTokens;
  std::vector<std::string> special;
  bool no_nfc = false;
  app.add_option("files", files, "training text: .tsv (all columns) or plain text (one text per line)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", out_dir, "output directory")->required();
  app.add_option("--vocab-size", opt.vocab_size, "vocabulary size, special and byte tokens included")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--min-frequency", opt.min_frequency, "minimum count of a merged pair")
      ->capture_default_str();
  app.add_option(
      "--special", special,
      "special tokens, ids 0.. in order (default: <pad> <s> </s> </src>, the gpstream template's)");
  app.add_option("--pre-tokenizer", pre, "gpt2, llama3 (digits in groups of 3) or qwen2 (single digits)")
      ->capture_default_str()
      ->check(CLI::IsMember({"gpt2", "llama3", "qwen2"}));
  app.add_flag("--no-nfc", no_nfc, "no NFC normalizer");
  if (auto code = gpstream::cli::parse_args(app, argc, argv)) return *code;

  if (!special.empty()) opt.special_tokens = special;
  opt.nfc = !no_nfc;
  opt.pre_tokenizer = parse_trainer_pre_tokenizer(pre).value();
  auto has = [&](const char* t) {
    for (const auto& s : opt.special_tokens) {
      if (s == t) return true;
    }
    return false;
  };
  if (has("<s>")) opt.bos_token = "<s>";
  if (has("</s>")) opt.eos_token = "</s>";
  if (has("<pad>")) opt.pad_token = "<pad>";

  const double t0 = steady_seconds();
  BpeTrainer trainer(opt);
  for (const auto& f : files) {
    if (auto s = trainer.add_file(f); !s.ok()) return gpstream::cli::fail("train-tokenizer", s.error());
  }
  BpeTrainer::Stats stats;
  auto tok = trainer.train(&stats);
  if (!tok.ok()) return gpstream::cli::fail("train-tokenizer", tok.error());
  if (auto s = BpeTrainer::write(out_dir, *tok, trainer.config_json()); !s.ok()) {
    return gpstream::cli::fail("train-tokenizer", s.error());
  }
  const double secs = steady_seconds() - t0;
  std::fprintf(stderr,
               "train-tokenizer: %zu words (%zu distinct), %zu merges, vocabulary %zu, %.1f s -> %s\n",
               stats.words, stats.unique_words, stats.merges, opt.special_tokens.size() + 256 + stats.merges,
               secs, out_dir.c_str());
  return 0;
}

}  // namespace

GPSTREAM_COMMAND("train-tokenizer", "learn a byte-level BPE tokenizer (Hugging Face tokenizer.json)",
                 "gpstream train-tokenizer corpus.en corpus.fr -o tok --vocab-size 8000",
                 run_train_tokenizer);
