// `gpstream bleu REF... -i HYP`: corpus (or --sentence-level) BLEU exactly as sacreBLEU 2.6.0's
// command line. Output (docs/evaluation.md): the `sacrebleu --format text` line by default,
// `-f json` sacreBLEU's default JSON (score rounded to --width), `--json` the same JSON with the
// full-precision score and the statistics, `-b` the score alone.
#include "eval/bleu.h"

#include <cstdio>

#include "cli/command.h"
#include "eval/python_format.h"
#include "eval/text_lines.h"

namespace {

using namespace gpstream;

std::string fixed(double v, int width) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", width, v);
  return b;
}

std::string number_list(const std::vector<double>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ", ";
    s += eval::python_float_repr(xs[i]);
  }
  return s + "]";
}

int run_bleu(int argc, char** argv) {
  CLI::App app{"BLEU as sacreBLEU 2.6.0 computes it (same numbers, same signature)", "gpstream bleu"};
  std::vector<std::string> ref_paths;
  std::string hyp_path = "-";
  std::string tokenize = "13a", smooth = "exp", format = "text";
  std::optional<double> smooth_value;
  bool lowercase = false, force = false, score_only = false, json = false, short_sig = false,
       sentence = false;
  int width = 1, num_refs = 1;
  app.add_option("refs", ref_paths, "reference file(s), one segment per line")->required();
  app.add_option("-i,--input", hyp_path, "hypothesis file ('-' or absent: standard input)");
  app.add_option("--tokenize", tokenize, "13a, intl, char or none (default 13a)");
  app.add_option("-s,--smooth-method", smooth, "exp, floor, add-k or none (default exp)");
  app.add_option("--smooth-value", smooth_value, "floor / add-k value (defaults 0.1 / 1)");
  app.add_flag("--lowercase", lowercase, "case-insensitive BLEU");
  app.add_flag("--force", force, "do not warn about input that looks tokenized");
  app.add_option("--num-refs", num_refs, "references per line of a single tab-separated reference file");
  app.add_flag("--sentence-level", sentence, "one score per segment (effective order on, as sacreBLEU -sl)");
  app.add_flag("-b,--score-only", score_only, "print only the score");
  app.add_option("-w,--width", width, "decimals of the printed score (default 1, as sacreBLEU)")
      ->check(CLI::Range(0, 17));
  app.add_option("-f,--format", format, "text (default) or json (sacreBLEU's JSON)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--json", json, "JSON with the full-precision score and the n-gram statistics");
  app.add_flag("--short", short_sig, "short signature");
  if (auto code = cli::parse_args(app, argc, argv)) return *code;

  eval::BleuOptions o;
  auto tok = eval::parse_tokenizer(tokenize);
  if (!tok.ok()) {
    std::fprintf(stderr, "gpstream bleu: %s\n", tok.error().message().c_str());
    return cli::kExitUsage;
  }
  auto sm = eval::parse_smooth_method(smooth);
  if (!sm.ok()) {
    std::fprintf(stderr, "gpstream bleu: %s\n", sm.error().message().c_str());
    return cli::kExitUsage;
  }
  o.tokenize = *tok;
  o.smooth_method = *sm;
  o.smooth_value = smooth_value;
  o.lowercase = lowercase;
  if (sentence) o = eval::sentence_bleu_options(o);

  auto refs = eval::read_reference_streams(ref_paths, num_refs);
  if (!refs.ok()) return cli::fail("bleu", refs.error());
  auto hyps = eval::read_text_lines(hyp_path, true);
  if (!hyps.ok()) return cli::fail("bleu", hyps.error());
  const std::string hyp_name = hyp_path == "-" ? "<stdin>" : hyp_path;
  if (auto st = eval::check_hyps_and_refs(*hyps, hyp_name, *refs, ref_paths); !st.ok())
    return cli::fail("bleu", st.error());

  if (!force) {
    size_t tokenized = 0;
    for (const auto& h : *hyps) tokenized += h.size() >= 2 && h.compare(h.size() - 2, 2, " .") == 0;
    if (tokenized >= 100) {
      std::fprintf(
          stderr,
          "gpstream bleu: warning: %zu lines end in a tokenized period (' .'); detokenize the output or pass "
          "--force\n",
          tokenized);
    }
  }

  int n_refs = 0;
  auto stats = eval::bleu_corpus_stats(*hyps, *refs, o, &n_refs);
  if (!stats.ok()) return cli::fail("bleu", stats.error());

  if (sentence) {
    const std::string sig = eval::bleu_signature(o, n_refs, short_sig);
    for (const auto& st : *stats) {
      const auto s = eval::compute_bleu(st, o);
      const std::string line = score_only ? fixed(s.score, width) : eval::format_bleu_line(s, sig, width);
      std::printf("%s\n", line.c_str());
    }
    return cli::kExitOk;
  }
  const auto score = eval::compute_bleu(eval::sum_stats(*stats, o.max_ngram_order), o);
  if (score_only) {
    std::printf("%s\n", fixed(score.score, width).c_str());
  } else if (json || format == "json") {
    const std::string sig = eval::bleu_signature(o, n_refs, false);
    std::vector<std::pair<std::string, std::string>> extra;
    std::string score_json;
    if (json) {
      score_json = eval::python_float_repr(score.score);
      extra = {{"counts", number_list(score.counts)},
               {"totals", number_list(score.totals)},
               {"precisions", number_list(score.precisions)},
               {"bp", eval::python_float_repr(score.bp)},
               {"ratio", eval::python_float_repr(score.ratio())},
               {"hyp_len", std::to_string(score.sys_len)},
               {"ref_len", std::to_string(score.ref_len)}};
    } else {
      score_json = eval::python_float_repr(std::strtod(fixed(score.score, width).c_str(), nullptr));
    }
    std::printf(
        "%s\n",
        eval::format_sacrebleu_json("BLEU", score_json, sig, eval::bleu_verbose(score), extra).c_str());
  } else {
    std::printf("%s\n",
                eval::format_bleu_line(score, eval::bleu_signature(o, n_refs, short_sig), width).c_str());
  }
  return cli::kExitOk;
}

}  // namespace

GPSTREAM_COMMAND("bleu", "BLEU of a hypothesis file against references (sacreBLEU-exact)", run_bleu);
