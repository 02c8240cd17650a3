// `gpstream plot DIR... [--label NAME]... [-o FILE.svg] [--x LAAL|AL|...] [--x-unit words|ms]
// [--y BLEU|chrF|WER] [--title T]`: quality–latency curves from one or more `gpstream eval --output` (or
// `eval --speech --output`) folders, one curve per folder and paradigm, named "<label or folder name>,
// <paradigm>", points labelled with k; offline runs are drawn as horizontal lines. The x axis title carries
// the unit the runs' instances.log files imply (source words, or ms for speech and paced text), or the one
// --x-unit states for runs kept without their instances.log.
#include "eval/plot.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "cli/command.h"
#include "eval/scores_tsv.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

// A run folder's name: <paradigm>[-k<K>][-phi<F>][-end-after-source] (gpstream eval writes <paradigm>-k<K>,
// <paradigm>-confidence-tau<T>, <paradigm>-local-agreement-lag<MIN>-<MAX>, <paradigm>-alignatt-f<F> and
// offline; eval --speech <paradigm>-k<K>-phi<F>[-end-after-source] and offline-phi<F>). A confidence run's
// curve is "<paradigm>-confidence", its points labelled with tau; a local-agreement run's
// "<paradigm>-local-agreement", its points labelled with the lag range; an alignatt run's
// "<paradigm>-alignatt", its points labelled with the frames.
struct RunName {
  std::string paradigm;
  std::string point;    // the point's label: "k=5", "tau=0.5", "lag=1-8", "f=2", or ""
  std::string variant;  // what follows the setting, for the legend: "φ=0.5", "φ=0 end-after-source"
};

std::string variant_text(std::string rest) {
  std::string out;
  while (!rest.empty()) {
    if (rest[0] == '-') rest.erase(0, 1);
    const bool phi = rest.rfind("phi", 0) == 0;
    size_t end = phi ? rest.find('-') : std::string::npos;
    std::string part = rest.substr(0, end);
    rest = end == std::string::npos ? "" : rest.substr(end);
    if (phi) part = "φ=" + part.substr(3);
    out += (out.empty() ? "" : " ") + part;
  }
  return out;
}

RunName parse_run_name(const std::string& name) {
  auto digits = [&](size_t from) {
    size_t q = from;
    while (q < name.size() && std::isdigit(static_cast<unsigned char>(name[q]))) ++q;
    return q;
  };
  for (size_t p = name.find("-k"); p != std::string::npos; p = name.find("-k", p + 1)) {
    const size_t q = digits(p + 2);
    if (q > p + 2 && (q == name.size() || name[q] == '-'))
      return {name.substr(0, p), "k=" + name.substr(p + 2, q - p - 2), variant_text(name.substr(q))};
  }
  if (const size_t p = name.find("-tau"); p != std::string::npos) {
    size_t q = p + 4;
    while (q < name.size() && (std::isdigit(static_cast<unsigned char>(name[q])) || name[q] == '.')) ++q;
    if (q > p + 4 && (q == name.size() || name[q] == '-'))
      return {name.substr(0, p), "tau=" + name.substr(p + 4, q - p - 4), variant_text(name.substr(q))};
  }
  if (const size_t p = name.find("-lag"); p != std::string::npos) {
    const size_t dash = digits(p + 4);
    const size_t q = dash < name.size() && name[dash] == '-' ? digits(dash + 1) : dash;
    if (dash > p + 4 && q > dash + 1 && (q == name.size() || name[q] == '-'))
      return {name.substr(0, p), "lag=" + name.substr(p + 4, q - p - 4), variant_text(name.substr(q))};
  }
  if (const size_t p = name.find("-alignatt-f"); p != std::string::npos) {
    const size_t f = p + 10;  // after "-alignatt-"
    const size_t q = digits(f + 1);
    if (q > f + 1 && (q == name.size() || name[q] == '-'))
      return {name.substr(0, f - 1), "f=" + name.substr(f + 1, q - f - 1), variant_text(name.substr(q))};
  }
  const size_t phi = name.find("-phi");
  if (phi != std::string::npos) return {name.substr(0, phi), "", variant_text(name.substr(phi))};
  return {name, "", ""};
}

// The last component of a folder path ("runs/group/" → "group", "." → the current folder's name).
std::string folder_name(const std::string& dir) {
  std::filesystem::path p = std::filesystem::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  const std::string n = p.filename().string();
  return n.empty() ? dir : n;
}

int run_plot(int argc, char** argv) {
  CLI::App app{"Quality-latency plot (SVG) from gpstream eval output folders", "gpstream plot"};
  std::vector<std::string> dirs, labels;
  std::string out = "quality_latency.svg", x_metric = "LAAL", y_metric = "BLEU", title = "Quality vs latency";
  std::string x_unit_name;
  app.add_option("dirs", dirs, "gpstream eval --output folders")->required()->check(CLI::ExistingDirectory);
  app.add_option("--label", labels,
                 "the name of each folder's curves in the legend (repeatable: one per folder, in order; "
                 "default: the folder's name when there are several folders)");
  app.add_option("-o,--output", out, "SVG file to write")->capture_default_str();
  app.add_option(
         "--x", x_metric,
         "latency metric on the x axis (a scores.tsv column, e.g. LAAL, AL, DAL, LAAL_CA); its unit, source "
         "words or ms, is read off the runs' instances.log (or stated with --x-unit)")
      ->capture_default_str();
  app.add_option(
         "--x-unit", x_unit_name,
         "the unit of the --x metric's values, for runs kept without their instances.log (scores.tsv "
         "only): words (source words) or ms; must agree with any instances.log there is (default: read "
         "off the instances.log; a run without one leaves the unit off the axis title, with a warning)")
      ->check(CLI::IsMember({"words", "ms"}));
  app.add_option("--y", y_metric, "quality metric on the y axis (BLEU, chrF; WER for speech runs)")
      ->capture_default_str();
  app.add_option("--title", title, "plot title")->capture_default_str();
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  if (!labels.empty() && labels.size() != dirs.size()) {
    std::fprintf(stderr, "gpstream plot: %zu --label for %zu folders: give one per folder, in order\n",
                 labels.size(), dirs.size());
    return kExitUsage;
  }
  namespace fs = std::filesystem;
  // Curves in folder order, then by paradigm and variant.
  std::map<std::pair<size_t, std::string>, eval::PlotSeries> curves;
  std::set<eval::DelayUnit> units;
  std::vector<std::string> no_log;
  for (size_t di = 0; di < dirs.size(); ++di) {
    const std::string& dir = dirs[di];
    std::vector<fs::path> runs;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && fs::exists(e.path() / "scores.tsv")) runs.push_back(e.path());
    if (runs.empty())
      return fail("plot", not_found(dir + ": no */scores.tsv (write them with gpstream eval --output)"));
    std::sort(runs.begin(), runs.end());
    const std::string base = !labels.empty() ? labels[di] : dirs.size() > 1 ? folder_name(dir) : "";
    for (const auto& run : runs) {
      auto scores = eval::read_scores_tsv((run / "scores.tsv").string());
      if (!scores) return fail("plot", scores.error());
      std::optional<double> x, y;
      for (const auto& [n, v] : *scores) {
        if (n == x_metric) x = v;
        if (n == y_metric) y = v;
      }
      if (!x || !y)
        return fail("plot", format_error((run / "scores.tsv").string() + ": no " + (x ? y_metric : x_metric) +
                                         " column"));
      if (!std::isfinite(*x) || !std::isfinite(*y)) {
        std::fprintf(stderr, "gpstream plot: warning: %s: %s or %s is not a number: left out\n",
                     (run / "scores.tsv").c_str(), x_metric.c_str(), y_metric.c_str());
        continue;
      }
      const fs::path log = run / "instances.log";
      if (fs::exists(log)) {
        auto unit = eval::read_delay_unit(log.string());
        if (!unit) return fail("plot", unit.error());
        units.insert(*unit);
      } else {
        no_log.push_back(run.string());
      }
      const RunName rn = parse_run_name(run.filename().string());
      std::string name = base.empty() || base == rn.paradigm ? rn.paradigm : base + ", " + rn.paradigm;
      if (!rn.variant.empty()) name += " " + rn.variant;
      auto& c = curves[{di, rn.paradigm + " " + rn.variant}];
      c.name = name;
      c.horizontal_line = rn.paradigm == "offline";
      c.points.push_back({*x, *y, rn.point});
    }
  }
  if (units.size() > 1)
    return fail("plot",
                format_error("the runs' delays mix source words (text) and ms (speech or paced text): "
                             "plot them separately"));
  // The unit the instances.log files imply, when every run has one; --x-unit states the x metric's unit and
  // must not contradict them.
  std::optional<eval::DelayUnit> unit, x_unit;
  if (no_log.empty() && !units.empty()) unit = *units.begin();
  if (!x_unit_name.empty()) {
    x_unit = x_unit_name == "ms" ? eval::DelayUnit::Ms : eval::DelayUnit::SourceWords;
    if (!units.empty() && *units.begin() != *x_unit) {
      std::fprintf(stderr,
                   "gpstream plot: --x-unit %s, but the runs' instances.log imply %s: leave --x-unit out\n",
                   x_unit_name.c_str(), eval::delay_unit_name(*units.begin()));
      return kExitUsage;
    }
  } else {
    if (!no_log.empty())
      std::fprintf(
          stderr,
          "gpstream plot: warning: %s has no instances.log: the latency unit is unknown (state it with "
          "--x-unit words|ms)\n",
          no_log.front().c_str());
    x_unit = unit;
  }
  eval::PlotSpec spec{title, eval::axis_title(x_metric, x_unit), eval::axis_title(y_metric, unit), {}};
  std::set<std::string> names;
  for (auto& [_, c] : curves) {
    if (!names.insert(c.name).second) {
      std::fprintf(stderr, "gpstream plot: two curves are both called '%s': name the folders with --label\n",
                   c.name.c_str());
      return kExitUsage;
    }
    std::sort(c.points.begin(), c.points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    spec.series.push_back(c);
  }
  const std::string svg = eval::render_svg(spec);
  if (Status s = write_file_atomic(out, std::as_bytes(std::span(svg))); !s.ok())
    return fail("plot", s.error());
  std::printf("%s: %zu curves\n", out.c_str(), spec.series.size());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("plot", "quality-latency SVG plot from gpstream eval output folders",
                 "gpstream plot runs/eval runs/eval-base -o quality_latency.svg", gpstream::cli::run_plot);
