// `gpstream score --instances FILE`: recomputes BLEU and the latency metrics from an instances.log
// written by SimulEval or by gpstream eval, like `simuleval --score-only`, and prints SimulEval's
// table (pandas to_string). Instances without delays are left out of the latency means, as
// SimulEval does, but the count and indices are printed on stderr.
#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "eval/python_format.h"
#include "eval/scores.h"

namespace {

using namespace gpstream;

int run_score(int argc, char** argv) {
  CLI::App app{"Score an instances.log like `simuleval --score-only`", "gpstream score"};
  std::string path, unit = "word", source_type = "text", tokenize = "13a", output;
  std::vector<std::string> metrics = eval::default_latency_metrics();
  bool no_ref_len = false, ca = false, json = false, quirks = false, no_quality = false;
  std::optional<double> pace;
  app.add_option("--instances", path, "instances.log (SimulEval JSON lines)")->required();
  app.add_flag("--no-use-ref-len", no_ref_len,
               "target length = hypothesis length instead of the reference's");
  app.add_option("--latency-unit", unit, "word (default) or char")->check(CLI::IsMember({"word", "char"}));
  app.add_flag("--computation-aware", ca, "also compute <METRIC>_CA from elapsed times");
  app.add_option("--latency-metrics", metrics, "metrics to compute (default: LAAL AL AP DAL ATD)");
  app.add_flag("--no-quality", no_quality, "skip BLEU");
  app.add_option("--sacrebleu-tokenizer", tokenize, "BLEU tokenizer: 13a (default), intl, char, none");
  app.add_option("--source-type", source_type, "text (default) or speech")
      ->check(CLI::IsMember({"text", "speech"}));
  app.add_option("--pace", pace, "paced text: words per second (delays, elapsed, source_length in ms)");
  app.add_flag(
      "--simuleval-output-quirks", quirks,
      "as `simuleval --output`: ATD from the speech branch, reference length in words (metrics.md A.5.1)");
  app.add_option("--output", output, "also write DIR/scores.tsv");
  app.add_flag("--json", json, "print full-precision scores as JSON");
  if (auto code = cli::parse_args(app, argc, argv)) return *code;
  if (pace && !(*pace > 0)) {
    std::fprintf(stderr, "gpstream score: --pace must be positive\n");
    return cli::kExitUsage;
  }
  auto tok = eval::parse_tokenizer(tokenize);
  if (!tok.ok()) {
    std::fprintf(stderr, "gpstream score: %s\n", tok.error().message().c_str());
    return cli::kExitUsage;
  }

  eval::ScoreOptions o;
  o.quality = !no_quality;
  o.tokenize = *tok;
  o.latency.metrics = metrics;
  o.latency.use_ref_len = !no_ref_len;
  o.latency.unit = unit == "char" ? eval::LatencyUnit::Char : eval::LatencyUnit::Word;
  o.latency.computation_aware = ca;
  o.latency.source_type = source_type == "speech" ? eval::SourceType::Speech : eval::SourceType::Text;
  if (pace) o.latency.text_word_ms = 1000.0 / *pace;
  o.latency.log_instance_quirks = quirks;

  auto log = eval::read_instances_log(path);
  if (!log.ok()) return cli::fail("score", log.error());
  for (const auto& w : log->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  auto res = eval::score_instances(log->records, o);
  if (!res.ok()) return cli::fail("score", res.error());
  for (const auto& w : res->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  if (!res->skipped.empty()) {
    std::string ids;
    for (size_t i = 0; i < res->skipped.size() && i < 20; ++i)
      ids += (i ? ", " : "") + std::to_string(res->skipped[i]);
    if (res->skipped.size() > 20) ids += ", ...";
    std::fprintf(
        stderr,
        "gpstream score: %zu of %zu instances have no delays and are left out of the latency averages "
        "(as SimulEval does): %s\n",
        res->skipped.size(), log->records.size(), ids.c_str());
  }

  if (!output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (auto st = eval::write_scores_tsv(output + "/scores.tsv", res->scores); !st.ok()) {
      return cli::fail("score", st.error());
    }
  }
  if (json) {
    std::string s = "{";
    for (const auto& [name, v] : res->scores) s += "\"" + name + "\": " + eval::python_repr(v) + ", ";
    s += "\"num_instances\": " + std::to_string(log->records.size()) + ", \"skipped\": [";
    for (size_t i = 0; i < res->skipped.size(); ++i) s += (i ? ", " : "") + std::to_string(res->skipped[i]);
    s += "]}";
    std::printf("%s\n", s.c_str());
  } else {
    std::printf("%s\n", eval::format_scores_table(res->scores).c_str());
  }
  return cli::kExitOk;
}

}  // namespace

GPSTREAM_COMMAND("score", "recompute BLEU and latency from an instances.log (simuleval --score-only)",
                 run_score);
