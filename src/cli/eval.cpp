// `gpstream eval -m MODEL (--tsv FILE | --source SRC --reference REF) [-k K]... [--paradigm P]...`:
// the simultaneous evaluation. For each (paradigm, k) it drives sessions over the test set one source
// word at a time (SimulEval's text evaluator), writes SimulEval's instances.log and scores.tsv under
// DIR/<paradigm>-k<k>/ (with --policy confidence, one run per --tau under DIR/<paradigm>-confidence-tau<T>/;
// with alignatt, one per --frames under DIR/<paradigm>-alignatt-f<F>/),
// and prints BLEU, chrF and the latency metrics; several values give a
// quality–latency table and an SVG plot (DIR/quality_latency.svg).
// `gpstream eval --speech ...` evaluates a speech model over a speech manifest instead (eval_speech.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/eval_long_form.h"
#include "cli/eval_run_config.h"
#include "cli/eval_speech.h"
#include "eval/chrf.h"
#include "eval/long_form_talks.h"
#include "eval/plot.h"
#include "eval/scores.h"
#include "eval/simultaneous.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

double get(const eval::NamedScores& s, const std::string& name) {
  for (const auto& [n, v] : s)
    if (n == name) return v.value;
  return 0;
}

int run_eval(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--speech") return run_eval_speech(argc, argv);
  CLI::App app{"Simultaneous evaluation: BLEU, chrF and SimulEval latency per (paradigm, k)",
               "gpstream eval"};
  StreamCli o;
  std::string tsv, source, reference, output;
  std::vector<int> ks;
  PolicySweep sweep;
  std::vector<std::string> paradigms;
  double pace = 0;
  bool json = false;
  size_t limit = 0;
  add_stream_options(app, o, false);
  add_policy_options(app, o, &sweep);
  app.add_option("--tsv", tsv, "test set: source<TAB>reference lines");
  app.add_option("--source", source, "test sources, one per line (with --reference)");
  app.add_option("--reference", reference, "test references, one per line (with --source)");
  app.add_option("-k,--wait-k", ks, "wait-k values (repeatable; default: the model's k)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--paradigm", paradigms, "paradigms (repeatable): " + stream::paradigm_names());
  app.add_option("--pace", pace, "speaking pace in words/s: adds computation-aware latency (ms)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--output", output, "folder for instances.log, scores.tsv and the plot");
  app.add_option("--limit", limit, "evaluate only the first N pairs");
  app.add_flag("--json", json, "print the results as JSON lines");
  bool long_form = false, no_punctuation = false;
  double talk_minutes = 30;
  app.add_flag(
      "--long-form", long_form,
      "translate the test set as talks, each one unsegmented stream, and score them by resegmentation "
      "and StreamLAAL (docs/evaluation.md)");
  app.add_option("--talk-minutes", talk_minutes,
                 "--long-form: each talk lasts at least this long at the pace")
      ->check(CLI::Range(0.0, 100000.0))
      ->capture_default_str();
  app.add_flag("--no-punctuation", no_punctuation,
               "take the punctuation off the source words' ends first (as live ASR output comes)");
  bool speech = false;  // handled above; listed for --help
  app.add_flag("--speech", speech,
               "evaluate a speech model over a speech manifest: see `gpstream eval --speech --help`");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  if (tsv.empty() == (source.empty() || reference.empty())) {
    std::fprintf(stderr, "gpstream eval: give either --tsv FILE or --source SRC --reference REF\n");
    return kExitUsage;
  }
  auto pairs = tsv.empty() ? eval::read_test_files(source, reference) : eval::read_test_tsv(tsv);
  if (!pairs) return fail("eval", pairs.error());
  if (limit && pairs->size() > limit) pairs->resize(limit);
  if (no_punctuation)
    for (auto& p : *pairs) p.source = eval::strip_punctuation(p.source);
  auto m = load_stream_model(o);
  if (!m) return fail("eval", m.error());
  auto settings = eval_settings(o, m->meta, ks, sweep);
  if (!settings)
    return std::fprintf(stderr, "gpstream eval: %s\n", settings.error().message().c_str()), kExitUsage;
  const stream::PolicyKind policy_kind =
      o.policy.empty() ? m->meta.policy.kind : *stream::parse_policy_name(o.policy);
  if (paradigms.empty()) paradigms.push_back(stream::paradigm_name(m->meta.paradigm));
  if (!output.empty()) std::filesystem::create_directories(output);
  if (Status st = write_eval_run_config(app, output, o.model, "text"); !st.ok())
    return fail("eval", st.error());

  if (long_form)
    return run_eval_long_form(o, *m, *pairs,
                              {*settings, paradigms, pace > 0 ? pace : 2.5, talk_minutes, output, json});
  const bool tty = isatty(STDERR_FILENO);
  std::map<std::string, eval::PlotSeries> curves;
  // The table's setting column: as wide as the longest setting ("1-8-agree3"), at least 4.
  int setting_width = 4;
  for (const auto& pname : paradigms)
    for (const SweepPoint& point : *settings)
      if (auto so = session_options(o, *m, point, pname))
        setting_width =
            std::max(setting_width, static_cast<int>(stream::policy_setting(so->policy, so->k).size()));
  if (!json)
    std::printf("%-20s %*s %7s %7s %7s %7s %7s %7s %7s %9s\n", "paradigm", setting_width,
                policy_kind == stream::PolicyKind::Confidence       ? "tau"
                : policy_kind == stream::PolicyKind::LocalAgreement ? "lag"
                : policy_kind == stream::PolicyKind::AlignAtt       ? "f"
                                                                    : "k",
                "BLEU", "chrF", "AL", "LAAL", "AP", "DAL", "ATD", "s/sent");
  for (const auto& pname : paradigms) {
    for (const SweepPoint& point : *settings) {
      auto so = session_options(o, *m, point, pname);
      if (!so) return std::fprintf(stderr, "gpstream eval: %s\n", so.error().message().c_str()), kExitUsage;
      const bool offline = so->paradigm == stream::Paradigm::Offline;
      const std::string setting = stream::policy_setting(so->policy, so->k);
      const std::string label = setting_label(*so);
      const double t0 = steady_seconds();
      eval::SimultaneousOptions eo;
      eo.pace_words_per_s = pace;
      auto recs = eval::evaluate_corpus(*m->model, *m->codec, *so, *pairs, eo, [&](size_t d, size_t t) {
        if (tty) progress_bar(label, d, t, t0);
      });
      if (!recs) return fail("eval", recs.error());
      const double secs = steady_seconds() - t0;
      eval::ScoreOptions sc;
      if (pace > 0) {
        sc.latency.text_word_ms = 1000.0 / pace;
        sc.latency.computation_aware = true;
      }
      auto scores = eval::score_instances(*recs, sc);
      if (!scores) return fail("eval", scores.error());
      std::vector<std::string> hyps, refs;
      for (const auto& r : *recs) hyps.push_back(r.prediction), refs.push_back(r.reference.value_or(""));
      auto chrf = eval::corpus_chrf(hyps, {refs}, eval::ChrfOptions{});
      if (!chrf) return fail("eval", chrf.error());
      scores->scores.insert(scores->scores.begin() + 1, {"chrF", eval::PyNumber{chrf->score, false}});
      if (!output.empty()) {
        const std::string dir = output + "/" + label;
        std::filesystem::create_directories(dir);
        if (Status s = eval::write_instances_log(dir + "/instances.log", *recs); !s.ok())
          return fail("eval", s.error());
        const std::string tsv_text = eval::format_scores_tsv(scores->scores);
        if (Status s = write_file_atomic(dir + "/scores.tsv", std::as_bytes(std::span(tsv_text))); !s.ok())
          return fail("eval", s.error());
      }
      const auto& s = scores->scores;
      if (json) {
        std::string j = "{\"paradigm\": \"" + std::string(stream::paradigm_name(so->paradigm)) + "\", " +
                        policy_json_members(so->policy, so->k) +
                        ", \"seconds_per_sentence\": " + eval::python_float_repr(secs / pairs->size());
        for (const auto& [n, v] : s) j += ", \"" + n + "\": " + eval::python_repr(v);
        std::printf("%s}\n", j.c_str());
      } else {
        std::printf("%-20s %*s %7.2f %7.2f %7.3f %7.3f %7.3f %7.3f %7.3f %9.4f\n",
                    stream::paradigm_name(so->paradigm), setting_width, offline ? "-" : setting.c_str(),
                    get(s, "BLEU"), get(s, "chrF"), get(s, "AL"), get(s, "LAAL"), get(s, "AP"), get(s, "DAL"),
                    get(s, "ATD"), secs / pairs->size());
      }
      std::fflush(stdout);
      const std::string curve_name = std::string(stream::paradigm_name(so->paradigm)) +
                                     (so->policy.kind == stream::PolicyKind::WaitK
                                          ? ""
                                          : " " + std::string(stream::policy_name(so->policy.kind)));
      auto& curve = curves[curve_name];
      curve.name = curve_name;
      curve.horizontal_line = offline;
      curve.points.push_back(
          {get(s, "LAAL"), get(s, "BLEU"), offline ? "" : stream::policy_setting_label(so->policy, so->k)});
      if (offline) break;
    }
  }
  const size_t n_points = [&] {
    size_t n = 0;
    for (auto& [_, c] : curves) n += c.points.size();
    return n;
  }();
  if (!output.empty() && n_points > 1) {
    const auto unit =
        pace > 0 ? eval::DelayUnit::Ms : eval::DelayUnit::SourceWords;  // paced delays are in ms
    eval::PlotSpec spec{"Quality vs latency", eval::axis_title("LAAL", unit), "BLEU", {}};
    for (auto& [_, c] : curves) spec.series.push_back(c);
    const std::string svg = eval::render_svg(spec);
    if (Status st = write_file_atomic(output + "/quality_latency.svg", std::as_bytes(std::span(svg)));
        !st.ok())
      return fail("eval", st.error());
  }
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND(
    "eval", "simultaneous evaluation (BLEU, chrF, SimulEval latency) over a test set",
    "gpstream eval -m models/gpstream-en-fr --tsv data/corpus/en-fr.dev.tsv -k 1 -k 3 -k 5 "
    "--output runs/eval\n"
    "gpstream eval --speech -m models/gpstream-speech-en --manifest speech/dev/manifest.tsv -k 7",
    gpstream::cli::run_eval);
