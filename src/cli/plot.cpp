// `gpstream plot DIR... [-o FILE.svg] [--x LAAL|AL|...] [--y BLEU|chrF]`: quality–latency curves from one or
// more `gpstream eval --output` folders (e.g. models trained per paradigm), one curve per folder and
// paradigm, points labelled with k; offline runs are drawn as horizontal lines.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/command.h"
#include "eval/plot.h"
#include "eval/scores_tsv.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

int run_plot(int argc, char** argv) {
  CLI::App app{"Quality-latency plot (SVG) from gpstream eval output folders", "gpstream plot"};
  std::vector<std::string> dirs;
  std::string out = "quality_latency.svg", x_metric = "LAAL", y_metric = "BLEU", title = "Quality vs latency";
  app.add_option("dirs", dirs, "gpstream eval --output folders")->required()->check(CLI::ExistingDirectory);
  app.add_option("-o,--output", out, "SVG file to write")->capture_default_str();
  app.add_option("--x", x_metric, "latency metric on the x axis (a scores.tsv column, e.g. LAAL, AL, DAL)")
      ->capture_default_str();
  app.add_option("--y", y_metric, "quality metric on the y axis (BLEU or chrF)")->capture_default_str();
  app.add_option("--title", title, "plot title")->capture_default_str();
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  namespace fs = std::filesystem;
  std::map<std::string, eval::PlotSeries> curves;
  for (const auto& dir : dirs) {
    std::vector<fs::path> runs;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && fs::exists(e.path() / "scores.tsv")) runs.push_back(e.path());
    if (runs.empty()) return fail("plot", not_found(dir + ": no */scores.tsv (write them with gpstream eval --output)"));
    std::sort(runs.begin(), runs.end());
    const std::string prefix = dirs.size() > 1 ? fs::path(dir).filename().string() + " " : "";
    for (const auto& run : runs) {
      auto scores = eval::read_scores_tsv((run / "scores.tsv").string());
      if (!scores) return fail("plot", scores.error());
      double x = 0, y = 0;
      bool hx = false, hy = false;
      for (const auto& [n, v] : *scores) {
        if (n == x_metric) x = v, hx = true;
        if (n == y_metric) y = v, hy = true;
      }
      if (!hx || !hy)
        return fail("plot", format_error((run / "scores.tsv").string() + ": no " + (hx ? y_metric : x_metric) + " column"));
      // Run folders are named <paradigm>-k<k> or <paradigm> (offline).
      const std::string name = run.filename().string();
      const size_t kpos = name.rfind("-k");
      const bool has_k = kpos != std::string::npos && kpos + 2 < name.size() &&
                         std::all_of(name.begin() + kpos + 2, name.end(), ::isdigit);
      const std::string paradigm = has_k ? name.substr(0, kpos) : name;
      auto& c = curves[prefix + paradigm];
      c.name = prefix + paradigm;
      c.horizontal_line = !has_k;
      c.points.push_back({x, y, has_k ? "k=" + name.substr(kpos + 2) : ""});
    }
  }
  eval::PlotSpec spec{title, x_metric + " (source words)", y_metric, {}};
  for (auto& [_, c] : curves) {
    std::sort(c.points.begin(), c.points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    spec.series.push_back(c);
  }
  const std::string svg = eval::render_svg(spec);
  if (Status s = write_file_atomic(out, std::as_bytes(std::span(svg))); !s.ok()) return fail("plot", s.error());
  std::printf("%s: %zu curves\n", out.c_str(), spec.series.size());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("plot", "quality-latency SVG plot from gpstream eval output folders",
                 "gpstream plot runs/eval runs/eval-base -o quality_latency.svg", gpstream::cli::run_plot);
