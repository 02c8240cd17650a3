// `gpstream compare-curves --baseline DIR... --system DIR... --at X,...`: is one quality–latency curve above
// another? Each DIR is one `gpstream eval --output` setting folder (its instances.log: one point of a curve).
// Paired bootstrap over sentences (eval/curve_bootstrap.h): in every resample each setting's BLEU (or WER,
// --quality WER) and mean latency are recomputed, each curve is interpolated linearly at the target
// latencies, and the quality difference system − baseline gets a 95% percentile interval per target
// (docs/evaluation.md, "Comparing two curves").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "eval/curve_bootstrap.h"
#include "eval/plot.h"

namespace gpstream::cli {
namespace {

constexpr const char* kCommand = "compare-curves";

int usage(const std::string& message) {
  std::fprintf(stderr, "gpstream %s: %s\n", kCommand, message.c_str());
  return kExitUsage;
}

// DIR/instances.log, or the path itself when it names a file.
std::string log_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  return (std::filesystem::path(path) / "instances.log").string();
}

std::string json_number(const std::optional<double>& v) {
  return v ? eval::python_float_repr(*v) : "null";
}

std::string fixed_or_dash(const std::optional<double>& v, int decimals, bool sign = false) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, *v);
  return buf;
}

// "2", "2.5", "1200": the shortest form of a target latency.
std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void print_points(const char* curve, const std::vector<std::string>& dirs,
                  const std::vector<eval::CurvePoint>& points, int dir_width) {
  for (size_t i = 0; i < points.size(); ++i) {
    std::printf("%-8s  %-*s  %9.3f  %6.2f\n", curve, dir_width, dirs[i].c_str(), points[i].latency,
                points[i].quality);
  }
}

int run_compare_curves(int argc, char** argv) {
  CLI::App app{
      "Paired bootstrap comparison of two quality-latency curves: is the system's BLEU above the baseline's "
      "(or its WER below) at equal latency?",
      std::string("gpstream ") + kCommand};
  std::vector<std::string> baseline_dirs, system_dirs;
  std::vector<double> at;
  std::string latency = "LAAL", tokenize = "13a", quality_name = "BLEU";
  int n_samples = 1000;
  uint64_t seed = 12345;
  bool json = false;
  app.add_option(
         "--baseline", baseline_dirs,
         "the baseline curve: one `eval --output` setting folder (or its instances.log) per point, e.g. "
         "runs/group-k1 runs/group-k3 ...")
      ->required()
      ->expected(1, -1);
  app.add_option("--system", system_dirs, "the compared curve's setting folders, as --baseline")
      ->required()
      ->expected(1, -1);
  app.add_option("--at", at,
                 "target latencies (comma-separated or repeated), in the runs' unit: source words, or ms for "
                 "paced text (eval --pace) and speech")
      ->required()
      ->delimiter(',');
  app.add_option("--latency", latency, "the latency axis: LAAL, AL, DAL, AP, or one of them with _CA")
      ->check(CLI::IsMember({"LAAL", "AL", "DAL", "AP", "LAAL_CA", "AL_CA", "DAL_CA", "AP_CA"}));
  app.add_option("-n,--samples", n_samples, "bootstrap resamples")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "resampling seed");
  app.add_option(
         "--quality", quality_name,
         "the quality axis: BLEU, or WER (in percent, basic normalisation as score --speech; lower is "
         "better, so a negative difference is the system's gain)")
      ->check(CLI::IsMember({"BLEU", "WER"}))
      ->capture_default_str();
  app.add_option("--sacrebleu-tokenizer", tokenize, "BLEU tokenizer: 13a (default), intl, char, none");
  app.add_flag("--json", json, "print the result as one JSON object (full precision)");
  if (auto code = parse_args(app, argc, argv)) return *code;
  for (double x : at)
    if (!std::isfinite(x)) return usage("--at: " + short_number(x) + " is not a finite latency");
  auto tok = eval::parse_tokenizer(tokenize);
  if (!tok.ok()) return usage(tok.error().message());
  eval::BleuOptions bleu;
  bleu.tokenize = *tok;
  const eval::CurveQuality quality =
      quality_name == "WER" ? eval::CurveQuality::Wer : eval::CurveQuality::Bleu;
  const bool ca = latency.size() > 3 && latency.compare(latency.size() - 3, 3, "_CA") == 0;

  // Read every run; all must be on the same sentences, in the same delay unit.
  std::vector<std::string> names;
  std::vector<eval::InstancesLog> logs;
  for (const auto* dirs : {&baseline_dirs, &system_dirs}) {
    for (const auto& d : *dirs) {
      auto log = eval::read_instances_log(log_path(d));
      if (!log.ok()) return fail(kCommand, log.error());
      for (const auto& w : log->warnings)
        std::fprintf(stderr, "gpstream %s: warning: %s\n", kCommand, w.c_str());
      if (log->records.empty()) return fail(kCommand, format_error(log_path(d) + ": no instances"));
      names.push_back(d);
      logs.push_back(std::move(*log));
    }
  }
  std::vector<const std::vector<eval::InstanceRecord>*> runs;
  for (const auto& l : logs) runs.push_back(&l.records);
  if (Status st = eval::check_same_sentences(names, runs); !st.ok()) return fail(kCommand, st.error());
  const eval::DelayUnit unit = eval::delay_unit_of(logs.front().records.front());
  for (size_t r = 0; r < logs.size(); ++r) {
    if (eval::delay_unit_of(logs[r].records.front()) != unit) {
      return fail(kCommand,
                  invalid_argument(names[r] + " counts latency in " +
                                   eval::delay_unit_name(eval::delay_unit_of(logs[r].records.front())) +
                                   " but " + names.front() + " in " + eval::delay_unit_name(unit) +
                                   ": the curves cannot share a latency axis"));
    }
  }
  if (ca && unit == eval::DelayUnit::SourceWords) {
    return fail(kCommand,
                invalid_argument(latency + " needs runs with a clock (eval --pace, or speech runs): " +
                                 names.front() + " is text without a pace, whose delays count source words"));
  }

  std::vector<eval::CurveSetting> baseline, system;
  for (size_t r = 0; r < logs.size(); ++r) {
    auto s = eval::curve_setting_from_instances(names[r], logs[r].records, latency, quality, bleu);
    if (!s.ok()) return fail(kCommand, s.error());
    (r < baseline_dirs.size() ? baseline : system).push_back(std::move(*s));
  }
  eval::CurveCompareOptions o;
  o.at = at;
  o.quality = quality;
  o.bleu = bleu;
  o.n_samples = n_samples;
  o.seed = seed;
  auto res = eval::compare_curves(baseline, system, o);
  if (!res.ok()) return fail(kCommand, res.error());
  const std::string unit_name = eval::delay_unit_name(unit);

  if (json) {
    std::string s = "{\"latency\": " + nlohmann::json(latency).dump() +
                    ", \"unit\": " + nlohmann::json(unit_name).dump() +
                    ", \"quality\": " + nlohmann::json(quality_name).dump() +
                    ", \"n_sentences\": " + std::to_string(res->n_sentences) +
                    ", \"n_samples\": " + std::to_string(res->n_samples) +
                    ", \"seed\": " + std::to_string(res->seed);
    for (const auto& [key, dirs, points] : {std::tuple{"baseline", &baseline_dirs, &res->baseline_points},
                                            std::tuple{"system", &system_dirs, &res->system_points}}) {
      s += std::string(", \"") + key + "\": [";
      for (size_t i = 0; i < points->size(); ++i) {
        s += (i ? ", " : "") + std::string("{\"run\": ") + nlohmann::json((*dirs)[i]).dump() + ", \"" +
             latency + "\": " + eval::python_float_repr((*points)[i].latency) + ", \"" + quality_name +
             "\": " + eval::python_float_repr((*points)[i].quality) + "}";
      }
      s += "]";
    }
    s += ", \"at\": [";
    for (size_t i = 0; i < res->at.size(); ++i) {
      const auto& d = res->at[i];
      s += (i ? ", " : "") + std::string("{\"at\": ") + eval::python_float_repr(d.at) +
           ", \"baseline\": " + json_number(d.baseline) + ", \"system\": " + json_number(d.system) +
           ", \"diff\": " + json_number(d.diff) + ", \"mean\": " + json_number(d.mean) +
           ", \"lower\": " + json_number(d.lower) + ", \"upper\": " + json_number(d.upper) +
           ", \"excludes_zero\": " + (d.excludes_zero ? "true" : "false") +
           ", \"n_valid\": " + std::to_string(d.n_valid) +
           ", \"n_out_of_range\": " + std::to_string(d.n_out_of_range) +
           ", \"n_baseline_out_of_range\": " + std::to_string(d.n_baseline_out_of_range) +
           ", \"n_system_out_of_range\": " + std::to_string(d.n_system_out_of_range) + "}";
    }
    s += "]}";
    std::printf("%s\n", s.c_str());
    return kExitOk;
  }

  int dir_width = 7;
  for (const auto& n : names) dir_width = std::max(dir_width, static_cast<int>(n.size()));
  std::printf("%-8s  %-*s  %9s  %6s\n", "curve", dir_width, "setting", latency.c_str(), quality_name.c_str());
  print_points("baseline", baseline_dirs, res->baseline_points, dir_width);
  print_points("system", system_dirs, res->system_points, dir_width);
  std::printf(
      "\n%s in %s; paired bootstrap: %d resamples of the %zu sentences (seed %llu); %s difference "
      "system - baseline at equal %s\n",
      latency.c_str(), unit_name.c_str(), res->n_samples, res->n_sentences,
      static_cast<unsigned long long>(res->seed), quality_name.c_str(), latency.c_str());
  std::printf("%9s  %8s  %6s  %6s  %6s  %-16s  %-10s  %s\n", latency.c_str(), "baseline", "system", "diff",
              "mean", "95% interval", "excludes 0", "out of range");
  for (const auto& d : res->at) {
    const std::string interval =
        d.lower ? "[" + fixed_or_dash(d.lower, 2, true) + ", " + fixed_or_dash(d.upper, 2, true) + "]" : "-";
    std::string out = std::to_string(d.n_out_of_range);
    if (d.n_out_of_range) {
      out += " (baseline " + std::to_string(d.n_baseline_out_of_range) + ", system " +
             std::to_string(d.n_system_out_of_range) + ")";
    }
    std::printf("%9s  %8s  %6s  %6s  %6s  %-16s  %-10s  %s\n", short_number(d.at).c_str(),
                fixed_or_dash(d.baseline, 2).c_str(), fixed_or_dash(d.system, 2).c_str(),
                fixed_or_dash(d.diff, 2, true).c_str(), fixed_or_dash(d.mean, 2, true).c_str(),
                interval.c_str(), d.excludes_zero ? "yes" : "no", out.c_str());
  }
  for (const auto& d : res->at) {
    const std::string where = latency + " " + short_number(d.at);
    if (!d.diff) {
      std::printf("note: %s is outside a curve's %s range on the full set: no difference there\n",
                  where.c_str(), latency.c_str());
    } else if (d.n_out_of_range > 0) {
      std::printf(
          "note: at %s, %d of %d resamples do not reach it on a curve; its interval is over the other %d\n",
          where.c_str(), d.n_out_of_range, res->n_samples, d.n_valid);
    }
  }
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND(
    "compare-curves",
    "paired bootstrap comparison of two quality-latency curves (BLEU or WER difference at equal latency, "
    "95% intervals) from eval --output setting folders",
    "gpstream compare-curves --baseline runs/waitk/group-k1 runs/waitk/group-k3 runs/waitk/group-k5 "
    "--system runs/conf/group-confidence-tau0.2 runs/conf/group-confidence-tau0.5 --at 2,3,4",
    gpstream::cli::run_compare_curves);
