// `gpstream bleu REF... -i HYP`: corpus (or --sentence-level) BLEU exactly as sacreBLEU 2.6.0's
// command line. Output (docs/evaluation.md): the `sacrebleu --format text` line by default,
// `-f json` sacreBLEU's default JSON (score rounded to --width), `--json` the same JSON with the
// full-precision score and the statistics, `-b` the score alone.
// `-i BASELINE SYSTEM... --paired-bs`: sacreBLEU's paired bootstrap resampling (eval/bootstrap.h):
// each system against the first, with 95% confidence intervals of the score and of the difference.
// `-i A1 A2 B1 B2 B3 --seed-bs 2,3`: systems trained with several seeds (their -i files grouped in that
// order), each against the first by the two-level bootstrap of eval/bootstrap.h (seed_bootstrap_bleu).
#include "eval/bleu.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "eval/bootstrap.h"
#include "eval/python_format.h"
#include "eval/text_lines.h"

namespace {

using namespace gpstream;

std::string number_list(const std::vector<double>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ", ";
    s += eval::python_float_repr(xs[i]);
  }
  return s + "]";
}

// One line per system (the first is the baseline), or JSON lines with --json.
int print_paired_bootstrap(const std::vector<std::string>& names,
                           const std::vector<std::vector<eval::BleuStats>>& stats, const eval::BleuOptions& o,
                           int n_samples, uint64_t seed, int width, bool json) {
  size_t name_width = 0;
  for (const auto& n : names) name_width = std::max(name_width, n.size());
  for (size_t i = 1; i < stats.size(); ++i) {
    auto r = eval::paired_bootstrap_bleu(stats[0], stats[i], o, n_samples, seed);
    if (!r.ok()) return cli::fail("bleu", r.error());
    if (json) {
      if (i == 1) {
        std::printf("{\"system\": %s, \"baseline\": true, \"score\": %s, \"mean\": %s, \"ci\": %s}\n",
                    nlohmann::json(names[0]).dump().c_str(),
                    eval::python_float_repr(r->baseline.score).c_str(),
                    eval::python_float_repr(r->baseline.mean).c_str(),
                    eval::python_float_repr(r->baseline.ci).c_str());
      }
      std::printf(
          "{\"system\": %s, \"baseline\": false, \"score\": %s, \"mean\": %s, \"ci\": %s, \"diff\": %s, "
          "\"diff_lower\": %s, \"diff_upper\": %s, \"p_value\": %s, \"n_samples\": %d, \"seed\": %llu}\n",
          nlohmann::json(names[i]).dump().c_str(), eval::python_float_repr(r->system.score).c_str(),
          eval::python_float_repr(r->system.mean).c_str(), eval::python_float_repr(r->system.ci).c_str(),
          eval::python_float_repr(r->diff).c_str(), eval::python_float_repr(r->diff_lower).c_str(),
          eval::python_float_repr(r->diff_upper).c_str(), eval::python_float_repr(r->p_value).c_str(),
          r->n_samples, static_cast<unsigned long long>(r->seed));
      continue;
    }
    if (i == 1) {
      std::printf("%-*s  BLEU (mean +- 95%% CI)  difference to baseline [95%% CI]  p-value\n",
                  static_cast<int>(name_width), "system");
      std::printf("%-*s  %s (%s +- %s)  baseline\n", static_cast<int>(name_width), names[0].c_str(),
                  cli::format_fixed(r->baseline.score, width).c_str(),
                  cli::format_fixed(r->baseline.mean, width).c_str(),
                  cli::format_fixed(r->baseline.ci, width).c_str());
    }
    std::printf("%-*s  %s (%s +- %s)  %+.*f [%+.*f, %+.*f]  %.4f%s\n", static_cast<int>(name_width),
                names[i].c_str(), cli::format_fixed(r->system.score, width).c_str(),
                cli::format_fixed(r->system.mean, width).c_str(),
                cli::format_fixed(r->system.ci, width).c_str(), width, r->diff, width, r->diff_lower, width,
                r->diff_upper, r->p_value, r->p_value < 0.05 ? " *" : "");
  }
  return cli::kExitOk;
}

std::string json_names(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + nlohmann::json(names[i]).dump();
  return s + "]";
}

// One line per system (the first is the baseline): seed-mean BLEU ± its sample sd over seeds, and the
// two-level bootstrap interval of the difference; JSON lines with --json.
int print_seed_bootstrap(const std::vector<std::vector<std::string>>& names,
                         const std::vector<std::vector<std::vector<eval::BleuStats>>>& runs,
                         const eval::BleuOptions& o, int n_samples, uint64_t seed, bool paired_seeds,
                         int width, bool json) {
  for (size_t i = 1; i < runs.size(); ++i) {
    auto r = eval::seed_bootstrap_bleu(runs[0], runs[i], o, n_samples, seed, paired_seeds);
    if (!r.ok()) return cli::fail("bleu", r.error());
    if (json) {
      if (i == 1) {
        std::printf("{\"system\": %s, \"baseline\": true, \"scores\": %s, \"mean\": %s, \"sd\": %s}\n",
                    json_names(names[0]).c_str(), number_list(r->baseline_scores).c_str(),
                    eval::python_float_repr(r->baseline_mean).c_str(),
                    eval::python_float_repr(eval::sample_sd(r->baseline_scores)).c_str());
      }
      std::printf(
          "{\"system\": %s, \"baseline\": false, \"scores\": %s, \"mean\": %s, \"sd\": %s, \"diff\": %s, "
          "\"diff_lower\": %s, \"diff_upper\": %s, \"n_samples\": %d, \"seed\": %llu}\n",
          json_names(names[i]).c_str(), number_list(r->system_scores).c_str(),
          eval::python_float_repr(r->system_mean).c_str(),
          eval::python_float_repr(eval::sample_sd(r->system_scores)).c_str(),
          eval::python_float_repr(r->diff).c_str(), eval::python_float_repr(r->diff_lower).c_str(),
          eval::python_float_repr(r->diff_upper).c_str(), r->n_samples,
          static_cast<unsigned long long>(r->seed));
      continue;
    }
    auto line = [&](size_t k, const std::vector<double>& scores, double mean) {
      std::printf("%-12s %s +- %s (%zu seeds)", ("system " + std::to_string(k)).c_str(),
                  cli::format_fixed(mean, width).c_str(),
                  cli::format_fixed(eval::sample_sd(scores), width).c_str(), scores.size());
    };
    if (i == 1) {
      std::printf("system       seed-mean BLEU +- sd  difference to system 0 [95%% CI]\n");
      line(0, r->baseline_scores, r->baseline_mean);
      std::printf("  baseline: %s\n", names[0][0].c_str());
    }
    line(i, r->system_scores, r->system_mean);
    std::printf("  %+.*f [%+.*f, %+.*f]%s: %s\n", width, r->diff, width, r->diff_lower, width, r->diff_upper,
                r->diff_lower > 0 || r->diff_upper < 0 ? " *" : "", names[i][0].c_str());
  }
  return cli::kExitOk;
}

int run_bleu(int argc, char** argv) {
  CLI::App app{"BLEU as sacreBLEU 2.6.0 computes it (same numbers, same signature)", "gpstream bleu"};
  std::vector<std::string> ref_paths;
  std::vector<std::string> hyp_paths;
  std::string tokenize = "13a", smooth = "exp", format = "text";
  std::optional<double> smooth_value;
  bool lowercase = false, force = false, score_only = false, json = false, short_sig = false,
       sentence = false;
  int width = 1, num_refs = 1, paired_bs_n = 1000;
  uint64_t paired_bs_seed = 12345;
  bool paired_bs = false;
  std::vector<int> seed_bs;
  bool seed_bs_paired = false;
  app.add_option("refs", ref_paths, "reference file(s), one segment per line")->required();
  app.add_option(
      "-i,--input", hyp_paths,
      "hypothesis file ('-' or absent: standard input); several with --paired-bs, the first is the "
      "baseline");
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
  app.add_flag("--paired-bs", paired_bs,
               "paired bootstrap resampling of each system against the first (sacreBLEU)");
  app.add_option("--seed-bs", seed_bs,
                 "two-level bootstrap over training seeds: the -i files are systems' runs, this many per "
                 "system in order (e.g. 3,3); each system against the first")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000));
  app.add_flag("--seed-bs-paired", seed_bs_paired,
               "with --seed-bs: the systems' runs are evaluations of the same trained models, run r against "
               "run r (equal counts), so one draw of seeds serves all");
  app.add_option("--paired-bs-n", paired_bs_n, "bootstrap resamples (default 1000)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--paired-bs-seed", paired_bs_seed, "resampling seed (default 12345, as SACREBLEU_SEED)");
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
  if (hyp_paths.empty()) hyp_paths.push_back("-");
  const bool seed_bootstrap = !seed_bs.empty();
  if (seed_bs_paired && !seed_bootstrap) {
    std::fprintf(stderr, "gpstream bleu: --seed-bs-paired goes with --seed-bs\n");
    return cli::kExitUsage;
  }
  if (paired_bs && seed_bootstrap) {
    std::fprintf(stderr, "gpstream bleu: --paired-bs and --seed-bs exclude each other\n");
    return cli::kExitUsage;
  }
  if ((paired_bs || seed_bootstrap) && sentence) {
    std::fprintf(stderr, "gpstream bleu: %s and --sentence-level exclude each other\n",
                 paired_bs ? "--paired-bs" : "--seed-bs");
    return cli::kExitUsage;
  }
  if (seed_bootstrap) {
    size_t total = 0;
    for (int c : seed_bs) total += static_cast<size_t>(c);
    if (seed_bs.size() < 2 || total != hyp_paths.size()) {
      std::fprintf(
          stderr,
          "gpstream bleu: --seed-bs gives the number of -i files of each system (two or more systems); "
          "they add up to %zu, and there are %zu -i files\n",
          total, hyp_paths.size());
      return cli::kExitUsage;
    }
  } else if (paired_bs != (hyp_paths.size() > 1)) {
    std::fprintf(stderr,
                 "gpstream bleu: --paired-bs needs two or more -i files (baseline first), and several -i "
                 "files need --paired-bs or --seed-bs\n");
    return cli::kExitUsage;
  }
  if (paired_bs || seed_bootstrap) {
    std::vector<std::vector<eval::BleuStats>> all_stats;
    for (const auto& path : hyp_paths) {
      auto h = eval::read_text_lines(path, true);
      if (!h.ok()) return cli::fail("bleu", h.error());
      if (auto st = eval::check_hyps_and_refs(*h, path, *refs, ref_paths); !st.ok())
        return cli::fail("bleu", st.error());
      auto st = eval::bleu_corpus_stats(*h, *refs, o, nullptr);
      if (!st.ok()) return cli::fail("bleu", st.error());
      all_stats.push_back(std::move(*st));
    }
    if (paired_bs)
      return print_paired_bootstrap(hyp_paths, all_stats, o, paired_bs_n, paired_bs_seed, width, json);
    std::vector<std::vector<std::string>> names;
    std::vector<std::vector<std::vector<eval::BleuStats>>> runs;
    size_t next = 0;
    for (int c : seed_bs) {
      names.emplace_back(hyp_paths.begin() + static_cast<std::ptrdiff_t>(next),
                         hyp_paths.begin() + static_cast<std::ptrdiff_t>(next + static_cast<size_t>(c)));
      runs.emplace_back(std::make_move_iterator(all_stats.begin() + static_cast<std::ptrdiff_t>(next)),
                        std::make_move_iterator(all_stats.begin() +
                                                static_cast<std::ptrdiff_t>(next + static_cast<size_t>(c))));
      next += static_cast<size_t>(c);
    }
    return print_seed_bootstrap(names, runs, o, paired_bs_n, paired_bs_seed, seed_bs_paired, width, json);
  }
  const std::string hyp_path = hyp_paths[0];
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
      const std::string line =
          score_only ? cli::format_fixed(s.score, width) : eval::format_bleu_line(s, sig, width);
      std::printf("%s\n", line.c_str());
    }
    return cli::kExitOk;
  }
  const auto score = eval::compute_bleu(eval::sum_stats(*stats, o.max_ngram_order), o);
  if (score_only) {
    std::printf("%s\n", cli::format_fixed(score.score, width).c_str());
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
      score_json =
          eval::python_float_repr(std::strtod(cli::format_fixed(score.score, width).c_str(), nullptr));
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

GPSTREAM_COMMAND("bleu", "BLEU of a hypothesis file against references (sacreBLEU-exact)",
                 "gpstream bleu ref.fr -i hyp.fr", run_bleu);
