// `gpstream eval --speech -m MODEL --manifest FILE [-k K]... [--phi F]... [--noise] [--limit N]
// [--output DIR] [--json]`: streaming speech recognition over a speech manifest (scripts/make-speech-data's
// dev split, or a plain audio<TAB>transcript list). For each (k, φ) every utterance is loaded as recorded
// (with --noise: the training loader's seeded noise, epoch 0, mixed in), streamed through a SpeechTranscriber
// in 10 ms pieces (speech/speech_evaluation.h), and scored as `gpstream score --speech` scores an
// instances.log (eval/speech_scores.h): WER, then AL, LAAL, AP, DAL, ATD and their computation-aware _CA
// variants in ms, plus the real-time factor (transcriber seconds / audio seconds). With --output,
// DIR/<paradigm>-k<K>-phi<F>[-end-after-source]/ gets SimulEval's instances.log and scores.tsv.
#include "cli/eval_speech.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/eval_run_config.h"
#include "cli/install_paths.h"
#include "cli/score_report.h"
#include "eval/python_format.h"
#include "eval/speech_scores.h"
#include "speech/speech_evaluation.h"
#include "speech/speech_manifest.h"

namespace gpstream::cli {
namespace {

struct SpeechRun {
  int k = 0;
  stream::SessionOptions options;
  std::string label;
};

// A score by name, or NaN when it is absent (no latency without any output).
double score_named(const eval::NamedScores& s, const std::string& name) {
  for (const auto& [n, v] : s)
    if (n == name) return v.value;
  return std::nan("");
}

std::string cell(double v, int precision) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

}  // namespace

int run_eval_speech(int argc, char** argv) {
  CLI::App app{"Speech evaluation: WER, SimulEval speech latency (ms) and real-time factor per (k, phi)",
               "gpstream eval --speech"};
  StreamCli o;
  std::string manifest_path, output, wer_norm = "basic";
  std::vector<int> ks;
  std::vector<std::string> phis;
  bool speech = false, noise = false, json = false;
  size_t limit = 0;
  app.add_flag("--speech", speech, "speech evaluation (this command)")->required();
  app.add_option("-m,--model", o.model, "speech model directory (LLM + speech_encoder.safetensors)")
      ->required()
      ->transform(resolve_model_name);
  app.add_option(
         "--manifest", manifest_path,
         "speech manifest: manifest.tsv of scripts/make-speech-data, or audio<TAB>transcript lines (paths "
         "relative to the manifest)")
      ->required();
  app.add_option("-k,--wait-k", ks, "wait-k in encoder chunks (repeatable; default: the model's)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--phi", phis,
                 "target group start position, a number >= 0 or S (repeatable; default: the model's)");
  app.add_option("--paradigm", o.paradigm, "one of " + stream::paradigm_names() + " (default: the model's)");
  app.add_flag(
      "--noise", noise,
      "mix the training loader's seeded noise (epoch 0) into the audio (default: the audio as given)");
  app.add_option("--limit", limit, "evaluate only the first N utterances");
  app.add_option("--wer-normalization", wer_norm, "basic (default) or none, as in `gpstream score --speech`")
      ->check(CLI::IsMember({"basic", "none"}));
  app.add_option("--output", output,
                 "folder for <paradigm>-k<K>-phi<F>[-end-after-source]/instances.log and scores.tsv");
  app.add_flag("--json", json, "one JSON line per (k, phi) with full-precision scores");
  app.add_option("-t,--threads", o.threads,
                 "threads (default: all cores; one for models under 20M parameters)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-tokens", o.max_tokens, "target tokens per utterance at most")
      ->check(CLI::Range(1, 1 << 16));
  add_end_after_source_option(app, o);
  add_beam_option(app, o);
  PolicySweep sweep;
  add_policy_options(app, o, &sweep);  // lags and frames count encoder chunks, as -k does
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  const auto norm = eval::parse_wer_normalization(wer_norm);
  if (!norm.ok())
    return std::fprintf(stderr, "gpstream eval: %s\n", norm.error().message().c_str()), kExitUsage;
  for (const auto& p : phis) {
    if (!stream::Phi::parse(p))
      return std::fprintf(stderr, "gpstream eval: --phi: expected a number >= 0 or S, got '%s'\n", p.c_str()),
             kExitUsage;
  }
  if (!o.paradigm.empty() && !stream::parse_paradigm(o.paradigm))
    return std::fprintf(stderr, "gpstream eval: --paradigm: unknown '%s' (known: %s)\n", o.paradigm.c_str(),
                        stream::paradigm_names().c_str()),
           kExitUsage;

  auto manifest = speech::read_speech_manifest(manifest_path);
  if (!manifest.ok()) return fail("eval", manifest.error());
  auto& utts = manifest->utterances;
  if (limit && utts.size() > limit) utts.resize(limit);
  auto model = speech::SpeechModel::load(o.model, o.threads);
  if (!model.ok()) return fail("eval", model.error());
  auto settings = eval_settings(o, model->llm.meta, ks, sweep);
  if (!settings)
    return std::fprintf(stderr, "gpstream eval: %s\n", settings.error().message().c_str()), kExitUsage;
  if (phis.empty()) phis.push_back(model->llm.meta.phi.to_string());

  std::vector<SpeechRun> runs;
  for (const SweepPoint& point : *settings) {
    bool offline = false;
    for (const auto& phi : phis) {
      StreamCli ko = o;
      ko.phi = phi;
      auto so = session_options(ko, model->llm, point, o.paradigm);
      if (!so.ok())
        return std::fprintf(stderr, "gpstream eval: %s\n", so.error().message().c_str()), kExitUsage;
      offline = so->paradigm == stream::Paradigm::Offline;
      std::string label = setting_label(*so) + "-phi" + so->phi.to_string();
      if (so->end_after_source && !offline) label += "-end-after-source";
      runs.push_back({so->k, *so, label});
    }
    if (offline) break;  // offline reads everything first: k does not matter
  }

  speech::SpeechEvalOptions eo;
  eo.load.add_noise = noise;
  eval::SpeechScoreOptions sco;
  sco.normalization = *norm;
  const bool tty = isatty(STDERR_FILENO);
  if (!output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (ec) return fail("eval", io_error(output + ": " + ec.message()));
  }
  if (Status st = write_eval_run_config(app, output, o.model, "speech"); !st.ok())
    return fail("eval", st.error());
  if (!json)
    std::printf("%-22s %4s %6s %7s %8s %8s %8s %8s %6s %6s %8s %8s %6s\n", "paradigm", "k", "phi", "WER",
                "AL", "AL_CA", "LAAL", "LAAL_CA", "AP", "AP_CA", "DAL", "DAL_CA", "RTF");
  for (const auto& run : runs) {
    const double t0 = steady_seconds();
    const size_t every = std::max<size_t>(1, utts.size() / 10);
    auto res = speech::evaluate_speech(*model, run.options, utts, eo, [&](size_t done, size_t total) {
      if (tty) {
        progress_bar(run.label, done, total, t0);
      } else if (done % every == 0 || done == total) {
        std::fprintf(stderr, "gpstream eval: %s: %zu/%zu utterances, %.0f s\n", run.label.c_str(), done,
                     total, steady_seconds() - t0);
      }
    });
    if (!res.ok()) return fail("eval", res.error());
    auto scores = eval::score_speech_instances(res->records, sco);
    if (!scores.ok()) return fail("eval", scores.error().with_context(run.label));
    for (const auto& w : scores->warnings)
      std::fprintf(stderr, "gpstream eval: warning: %s: %s\n", run.label.c_str(), w.c_str());
    report_skipped("eval", scores->skipped, res->records.size());
    if (!output.empty()) {
      const std::string dir = output + "/" + run.label;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) return fail("eval", io_error(dir + ": " + ec.message()));
      if (Status st = eval::write_instances_log(dir + "/instances.log", res->records); !st.ok())
        return fail("eval", st.error());
      if (Status st = eval::write_scores_tsv(dir + "/scores.tsv", scores->scores); !st.ok())
        return fail("eval", st.error());
    }
    const auto& s = scores->scores;
    const double rtf = res->real_time_factor();
    const std::string setting = stream::policy_setting(run.options.policy, run.k);
    const std::string setting_json = policy_json_members(run.options.policy, run.k);
    if (json) {
      std::printf(
          "{\"paradigm\": \"%s\", %s, \"phi\": \"%s\", \"end_after_source\": %s, \"beam\": %d, "
          "\"utterances\": %zu, "
          "\"audio_seconds\": %s, \"compute_seconds\": %s, \"rtf\": %s, %s, \"num_instances\": %zu, "
          "\"skipped\": %s}\n",
          stream::paradigm_name(run.options.paradigm), setting_json.c_str(),
          run.options.phi.to_string().c_str(), run.options.end_after_source ? "true" : "false",
          run.options.beam, res->records.size(), eval::python_float_repr(res->audio_seconds).c_str(),
          eval::python_float_repr(res->compute_seconds).c_str(), eval::python_float_repr(rtf).c_str(),
          speech_scores_json_members(*scores, *norm).c_str(), res->records.size(),
          skipped_json(scores->skipped).c_str());
    } else {
      const bool offline = run.options.paradigm == stream::Paradigm::Offline;
      std::printf("%-22s %4s %6s %7s %8s %8s %8s %8s %6s %6s %8s %8s %6s\n",
                  stream::paradigm_name(run.options.paradigm), offline ? "-" : setting.c_str(),
                  run.options.phi.to_string().c_str(), cell(score_named(s, "WER"), 2).c_str(),
                  cell(score_named(s, "AL"), 1).c_str(), cell(score_named(s, "AL_CA"), 1).c_str(),
                  cell(score_named(s, "LAAL"), 1).c_str(), cell(score_named(s, "LAAL_CA"), 1).c_str(),
                  cell(score_named(s, "AP"), 3).c_str(), cell(score_named(s, "AP_CA"), 3).c_str(),
                  cell(score_named(s, "DAL"), 1).c_str(), cell(score_named(s, "DAL_CA"), 1).c_str(),
                  cell(rtf, 3).c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace gpstream::cli
