// `gpstream chrf REF... -i HYP`: chrF / chrF++ exactly as sacreBLEU 2.6.0 (`sacrebleu -m chrf`).
// Output as `gpstream bleu`: text line by default, -f json, --json (full precision), -b.
#include "eval/chrf.h"

#include <cstdio>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "eval/python_format.h"
#include "eval/text_lines.h"

namespace {

using namespace gpstream;

int run_chrf(int argc, char** argv) {
  CLI::App app{"chrF / chrF++ as sacreBLEU 2.6.0 computes it", "gpstream chrf"};
  std::vector<std::string> ref_paths;
  std::string hyp_path = "-", format = "text";
  eval::ChrfOptions o;
  bool score_only = false, json = false, short_sig = false, sentence = false;
  int width = 1, num_refs = 1;
  app.add_option("refs", ref_paths, "reference file(s), one segment per line")->required();
  app.add_option("-i,--input", hyp_path, "hypothesis file ('-' or absent: standard input)");
  app.add_option("--char-order", o.char_order, "character n-gram order (default 6)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--word-order", o.word_order, "word n-gram order (default 0; 2 = chrF++)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--beta", o.beta, "recall weight (default 2)")->check(CLI::Range(0, 1000));
  app.add_flag("--whitespace", o.whitespace, "keep whitespace in character n-grams");
  app.add_flag("--lowercase", o.lowercase, "case-insensitive");
  app.add_flag("--eps-smoothing", o.eps_smoothing, "chrF++.py / NLTK / Moses epsilon smoothing");
  app.add_option("--num-refs", num_refs, "references per line of a single tab-separated reference file");
  app.add_flag("--sentence-level", sentence, "one score per segment");
  app.add_flag("-b,--score-only", score_only, "print only the score");
  app.add_option("-w,--width", width, "decimals of the printed score (default 1, as sacreBLEU)")
      ->check(CLI::Range(0, 17));
  app.add_option("-f,--format", format, "text (default) or json (sacreBLEU's JSON)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--json", json, "JSON with the full-precision score");
  app.add_flag("--short", short_sig, "short signature");
  if (auto code = cli::parse_args(app, argc, argv)) return *code;
  if (o.char_order + o.word_order < 1) {
    std::fprintf(stderr, "gpstream chrf: --char-order and --word-order cannot both be 0\n");
    return cli::kExitUsage;
  }

  auto refs = eval::read_reference_streams(ref_paths, num_refs);
  if (!refs.ok()) return cli::fail("chrf", refs.error());
  auto hyps = eval::read_text_lines(hyp_path, true);
  if (!hyps.ok()) return cli::fail("chrf", hyps.error());
  const std::string hyp_name = hyp_path == "-" ? "<stdin>" : hyp_path;
  if (auto st = eval::check_hyps_and_refs(*hyps, hyp_name, *refs, ref_paths); !st.ok())
    return cli::fail("chrf", st.error());

  int n_refs = 0;
  auto stats = eval::chrf_corpus_stats(*hyps, *refs, o, &n_refs);
  if (!stats.ok()) return cli::fail("chrf", stats.error());
  const std::string name = eval::chrf_name(o);
  if (sentence) {
    const std::string sig = eval::chrf_signature(o, n_refs, short_sig);
    for (const auto& st : *stats) {
      const double s = eval::chrf_f_score(st, o);
      std::printf(
          "%s\n",
          (score_only ? cli::format_fixed(s, width) : eval::format_chrf_line(s, o, sig, width)).c_str());
    }
    return cli::kExitOk;
  }
  eval::ChrfStats total(static_cast<size_t>(3 * (o.char_order + o.word_order)), 0);
  for (const auto& st : *stats) {
    for (size_t i = 0; i < total.size(); ++i) total[i] += st[i];
  }
  const double score = eval::chrf_f_score(total, o);
  if (score_only) {
    std::printf("%s\n", cli::format_fixed(score, width).c_str());
  } else if (json || format == "json") {
    const std::string score_json =
        json ? eval::python_float_repr(score)
             : eval::python_float_repr(std::strtod(cli::format_fixed(score, width).c_str(), nullptr));
    std::printf(
        "%s\n",
        eval::format_sacrebleu_json(name, score_json, eval::chrf_signature(o, n_refs, false), "").c_str());
  } else {
    std::printf("%s\n",
                eval::format_chrf_line(score, o, eval::chrf_signature(o, n_refs, short_sig), width).c_str());
  }
  return cli::kExitOk;
}

}  // namespace

GPSTREAM_COMMAND("chrf", "chrF / chrF++ of a hypothesis file against references (sacreBLEU-exact)",
                 "gpstream chrf ref.fr -i hyp.fr --word-order 2", run_chrf);
