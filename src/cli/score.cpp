// `gpstream score --instances FILE`: recomputes BLEU and the latency metrics from an instances.log
// written by SimulEval or by gpstream eval, like `simuleval --score-only`, and prints SimulEval's
// table (pandas to_string). Instances without delays are left out of the latency means, as
// SimulEval does, but the count and indices are printed on stderr.
// `--speech` scores a speech-input log instead (eval/speech_scores.h): WER, then SimulEval's speech
// latency in ms with the computation-aware variants; each record is validated as untrusted input.
// `--long-form FILE` scores one unsegmented run (eval/long_form.h): the hypothesis word stream is resegmented
// against the reference sentences (mwerSegmenter's criterion), then BLEU, chrF, StreamLAAL (+ _CA).
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/score_report.h"
#include "eval/long_form.h"
#include "eval/python_format.h"
#include "eval/scores.h"
#include "eval/speech_scores.h"
#include "util/mapped_file.h"

namespace {

using namespace gpstream;

int write_output(const std::string& output, const eval::NamedScores& scores) {
  if (output.empty()) return cli::kExitOk;
  std::error_code ec;
  std::filesystem::create_directories(output, ec);
  if (auto st = eval::write_scores_tsv(output + "/scores.tsv", scores); !st.ok())
    return cli::fail("score", st.error());
  return cli::kExitOk;
}

struct SpeechArgs {
  std::string path, unit, normalization, output;
  std::vector<std::string> metrics;
  bool no_ref_len = false, no_ca = false, json = false;
};

int run_score_speech(const SpeechArgs& a) {
  auto norm = eval::parse_wer_normalization(a.normalization);
  if (!norm.ok()) {
    std::fprintf(stderr, "gpstream score: %s\n", norm.error().message().c_str());
    return cli::kExitUsage;
  }
  eval::SpeechScoreOptions o;
  o.normalization = *norm;
  o.metrics = a.metrics;
  o.use_ref_len = !a.no_ref_len;
  o.unit = a.unit == "char" ? eval::LatencyUnit::Char : eval::LatencyUnit::Word;
  o.computation_aware = !a.no_ca;
  auto log = eval::read_instances_log(a.path);
  if (!log.ok()) return cli::fail("score", log.error());
  for (const auto& w : log->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  auto res = eval::score_speech_instances(log->records, o);
  if (!res.ok()) return cli::fail("score", res.error().with_context(a.path));
  for (const auto& w : res->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  cli::report_skipped("score", res->skipped, log->records.size());
  if (int rc = write_output(a.output, res->scores)) return rc;
  if (a.json) {
    std::printf("{%s, \"num_instances\": %zu, \"skipped\": %s}\n",
                cli::speech_scores_json_members(*res, o.normalization).c_str(), log->records.size(),
                cli::skipped_json(res->skipped).c_str());
  } else {
    std::printf("%s\n", eval::format_scores_table(res->scores).c_str());
    std::printf("%s\n", cli::speech_wer_line(res->wer, o.normalization).c_str());
  }
  return cli::kExitOk;
}

int run_score_long_form(const std::string& path, eval::BleuTokenizer tokenize, const std::string& output,
                        bool json) {
  auto text = read_regular_text_file(path, eval::kMaxLongFormFileBytes);
  if (!text.ok()) return cli::fail("score", text.error());
  auto run = eval::parse_long_form_run(*text, path);
  if (!run.ok()) return cli::fail("score", run.error());
  eval::BleuOptions bleu;
  bleu.tokenize = tokenize;
  auto res = eval::score_long_form(*run, bleu);
  if (!res.ok()) return cli::fail("score", res.error().with_context(path));
  const size_t n_sentences = run->references.size();
  if (!res->laal.mean) {
    std::fprintf(stderr, "gpstream score: %s: no sentence has a hypothesis word: StreamLAAL is undefined\n",
                 path.c_str());
    return cli::kExitError;
  }
  if (res->laal.empty_sentences > 0) {
    std::fprintf(stderr,
                 "gpstream score: %zu of %zu sentences have no hypothesis words after resegmentation and are "
                 "left out of StreamLAAL\n",
                 res->laal.empty_sentences, n_sentences);
  }
  eval::NamedScores scores = {{"BLEU", {res->bleu.score.score, false}},
                              {"chrF", {res->chrf.score, false}},
                              {"StreamLAAL", {*res->laal.mean, false}}};
  if (res->laal_ca) scores.push_back({"StreamLAAL_CA", {*res->laal_ca->mean, false}});
  if (int rc = write_output(output, scores)) return rc;
  if (json) {
    std::string s = "{";
    for (const auto& [name, v] : scores) s += "\"" + name + "\": " + eval::python_repr(v) + ", ";
    s += "\"num_sentences\": " + std::to_string(n_sentences) +
         ", \"empty_sentences\": " + std::to_string(res->laal.empty_sentences) +
         ", \"hypothesis_words\": " + std::to_string(run->words.size()) + ", \"segments\": [";
    for (size_t k = 0; k < res->segments.size(); ++k)
      s += (k ? ", " : "") + nlohmann::json(res->segments[k]).dump(-1, ' ', true);
    s += "]}";
    std::printf("%s\n", s.c_str());
  } else {
    std::printf("%s\n", eval::format_scores_table(scores).c_str());
  }
  return cli::kExitOk;
}

int run_score(int argc, char** argv) {
  CLI::App app{"Score an instances.log like `simuleval --score-only`, or a long-form run (--long-form)",
               "gpstream score"};
  std::string path, long_form, unit = "word", source_type = "text", tokenize = "13a", output;
  std::vector<std::string> metrics = eval::default_latency_metrics();
  bool no_ref_len = false, ca = false, json = false, quirks = false, no_quality = false;
  std::optional<double> pace;
  bool speech = false, no_ca = false;
  std::string wer_norm = "basic", latency_def = "simuleval";
  app.add_option("--instances", path, "instances.log (SimulEval JSON lines)");
  app.add_option("--long-form", long_form,
                 "score one unsegmented run (JSON: sentences, references, hypothesis words with delays; "
                 "docs/evaluation.md): resegmented BLEU, chrF, StreamLAAL (+ _CA)");
  app.add_flag("--speech", speech,
               "speech-input log: WER and latency in ms of audio (+ _CA unless --no-computation-aware)");
  app.add_option("--wer-normalization", wer_norm, "with --speech: basic (default) or none")
      ->check(CLI::IsMember({"basic", "none"}));
  app.add_flag("--no-computation-aware", no_ca, "with --speech: no _CA metrics (elapsed not needed)");
  app.add_flag("--no-use-ref-len", no_ref_len,
               "target length = hypothesis length instead of the reference's");
  app.add_option("--latency-def", latency_def,
                 "simuleval (default) or paper: AL and LAAL as the paper's lagging code computes them, from "
                 "the log's unit_delays (docs/evaluation.md)")
      ->check(CLI::IsMember({"simuleval", "paper"}));
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
  if (app.count("--instances") + app.count("--long-form") != 1) {
    std::fprintf(stderr, "gpstream score: give exactly one of --instances and --long-form\n");
    return cli::kExitUsage;
  }
  if (app.count("--long-form")) {
    for (const auto* opt : app.get_options()) {
      const std::string name = opt->get_name();
      if (opt->count() > 0 && name != "--long-form" && name != "--json" && name != "--output" &&
          name != "--sacrebleu-tokenizer") {
        std::fprintf(stderr, "gpstream score: %s does not apply to --long-form\n", name.c_str());
        return cli::kExitUsage;
      }
    }
    auto tok = eval::parse_tokenizer(tokenize);
    if (!tok.ok()) {
      std::fprintf(stderr, "gpstream score: %s\n", tok.error().message().c_str());
      return cli::kExitUsage;
    }
    return run_score_long_form(long_form, *tok, output, json);
  }
  if (speech) {  // --computation-aware is accepted and is the default here
    if (ca && no_ca) {
      std::fprintf(stderr, "gpstream score: --computation-aware and --no-computation-aware contradict\n");
      return cli::kExitUsage;
    }
    for (const char* opt : {"--pace", "--source-type", "--simuleval-output-quirks", "--sacrebleu-tokenizer",
                            "--no-quality", "--latency-def"}) {
      if (app.count(opt)) {
        std::fprintf(stderr, "gpstream score: %s does not apply to --speech\n", opt);
        return cli::kExitUsage;
      }
    }
    return run_score_speech({path, unit, wer_norm, output, metrics, no_ref_len, no_ca, json});
  }
  for (const char* opt : {"--wer-normalization", "--no-computation-aware"}) {
    if (app.count(opt)) {
      std::fprintf(stderr, "gpstream score: %s needs --speech\n", opt);
      return cli::kExitUsage;
    }
  }
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
  o.latency.definition = *eval::parse_latency_definition(latency_def);
  if (o.latency.definition == eval::LatencyDefinition::Paper && !app.count("--latency-metrics"))
    o.latency.metrics = {"AL", "LAAL"};

  auto log = eval::read_instances_log(path);
  if (!log.ok()) return cli::fail("score", log.error());
  for (const auto& w : log->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  auto res = eval::score_instances(log->records, o);
  if (!res.ok()) return cli::fail("score", res.error());
  for (const auto& w : res->warnings) std::fprintf(stderr, "gpstream score: warning: %s\n", w.c_str());
  cli::report_skipped("score", res->skipped, log->records.size());
  if (int rc = write_output(output, res->scores)) return rc;
  if (json) {
    std::string s = "{";
    for (const auto& [name, v] : res->scores) s += "\"" + name + "\": " + eval::python_repr(v) + ", ";
    s += "\"num_instances\": " + std::to_string(log->records.size()) +
         ", \"skipped\": " + cli::skipped_json(res->skipped) + "}";
    std::printf("%s\n", s.c_str());
  } else {
    std::printf("%s\n", eval::format_scores_table(res->scores).c_str());
  }
  return cli::kExitOk;
}

}  // namespace

GPSTREAM_COMMAND(
    "score",
    "recompute BLEU and latency from an instances.log (simuleval --score-only); --speech: WER and "
    "speech latency; --long-form: resegmented BLEU, chrF and StreamLAAL of an unsegmented run",
    "gpstream score --instances runs/eval/group-k5/instances.log\n"
    "gpstream score --long-form run.json",
    run_score);
