// Quality–latency plots as standalone SVG: one curve per system (e.g. a model's paradigm), points labelled
// with k, dashed horizontal lines for offline systems, ticks at 1, 2, 2.5 or 5 × 10^n, and a legend sized to
// its text (the canvas grows to hold the legend, the title and the axis titles). Point labels are placed
// greedily, the most hemmed-in first, so that no two overlap, none covers a point, and none without a leader
// line sits nearer another point than its own. Also the unit of a run's latency scores, read off
// its instances.log, and the axis title it gives a metric. No dependencies: the SVG is written by hand.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/instance_log.h"
#include "util/error.h"

namespace gpstream::eval {

struct PlotPoint {
  double x = 0, y = 0;
  std::string label;  // e.g. "k=3"
};

struct PlotSeries {
  std::string name;  // the legend entry
  std::vector<PlotPoint> points;
  bool horizontal_line = false;  // draw y of the first point across the plot (offline)
};

struct PlotSpec {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
};

// The SVG, at least width × height px. Non-finite points are left out. Text elements carry a class: "title",
// "axis-title", "tick", "legend", "point-label".
std::string render_svg(const PlotSpec& spec, int width = 640, int height = 420);

// What a run's delays count.
enum class DelayUnit { SourceWords, Ms };
// "source words" or "ms".
const char* delay_unit_name(DelayUnit unit);
// The unit of a run's latency scores, from one record of its instances.log. SimulEval writes a text
// instance's source_length as an int (the number of source words, which its delays count too) and a speech
// instance's as a float (ms); gpstream eval --pace writes paced text's in ms, as floats, too.
DelayUnit delay_unit_of(const InstanceRecord& record);
// delay_unit_of the first record of an instances.log.
Result<DelayUnit> read_delay_unit(const std::string& instances_log_path);

// The axis title of a score: a latency metric (AL, LAAL, DAL, ATD, StartOffset, EndOffset, with or without
// _CA) gets its unit, "LAAL (source words)", "LAAL_CA (ms)"; AP and RTF (ratios), NumChunks (a count) and any
// other name (BLEU, chrF, WER) stay as they are, as does every name when the unit is unknown.
std::string axis_title(std::string_view metric, std::optional<DelayUnit> unit);

}  // namespace gpstream::eval
