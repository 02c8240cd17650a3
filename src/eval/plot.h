// Quality–latency plots as standalone SVG: one curve per system (e.g. paradigm), points labelled with
// k, and horizontal lines for offline systems. No dependencies: the SVG is written by hand.
#pragma once

#include <string>
#include <vector>

namespace gpstream::eval {

struct PlotPoint {
  double x = 0, y = 0;
  std::string label;  // e.g. "k=3"
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;
  bool horizontal_line = false;  // draw y of the first point across the plot (offline)
};

struct PlotSpec {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
};

std::string render_svg(const PlotSpec& spec, int width = 640, int height = 420);

}  // namespace gpstream::eval
