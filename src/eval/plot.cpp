// Hand-written SVG line plots.
#include "eval/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gpstream::eval {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// A "nice" tick step for a range.
double tick_step(double range) {
  if (!(range > 0)) return 1;
  const double raw = range / 6, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

std::string render_svg(const PlotSpec& spec, int width, int height) {
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                          "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : spec.series)
    for (const auto& p : s.points) {
      if (!s.horizontal_line) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
      y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (!std::isfinite(y0)) y0 = 0, y1 = 1;
  if (x1 - x0 < 1e-9) x0 -= 1, x1 += 1;
  if (y1 - y0 < 1e-9) y0 -= 1, y1 += 1;
  const double xs = tick_step(x1 - x0), ys = tick_step(y1 - y0);
  x0 = std::floor(x0 / xs) * xs, x1 = std::ceil(x1 / xs) * xs;
  y0 = std::floor(y0 / ys) * ys, y1 = std::ceil(y1 / ys) * ys;
  const double L = 64, R = width - 150, T = 40, B = height - 50;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (R - L); };
  auto py = [&](double y) { return B - (y - y0) / (y1 - y0) * (B - T); };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(width / 2.0) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
       esc(spec.title) + "</text>\n";
  for (double x = x0; x <= x1 + xs / 2; x += xs)
    o += "<line x1=\"" + num(px(x)) + "\" y1=\"" + num(T) + "\" x2=\"" + num(px(x)) + "\" y2=\"" + num(B) +
         "\" stroke=\"#eee\"/><text x=\"" + num(px(x)) + "\" y=\"" + num(B + 16) +
         "\" text-anchor=\"middle\">" + num(x) + "</text>\n";
  for (double y = y0; y <= y1 + ys / 2; y += ys)
    o += "<line x1=\"" + num(L) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(R) + "\" y2=\"" + num(py(y)) +
         "\" stroke=\"#eee\"/><text x=\"" + num(L - 6) + "\" y=\"" + num(py(y) + 4) +
         "\" text-anchor=\"end\">" + num(y) + "</text>\n";
  o += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(R - L) + "\" height=\"" + num(B - T) +
       "\" fill=\"none\" stroke=\"#333\"/>\n";
  o += "<text x=\"" + num((L + R) / 2) + "\" y=\"" + num(height - 12.0) + "\" text-anchor=\"middle\">" +
       esc(spec.x_label) + "</text>\n";
  o += "<text transform=\"translate(16," + num((T + B) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       esc(spec.y_label) + "</text>\n";
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const auto& s = spec.series[i];
    const std::string c = colors[i % 8];
    if (s.horizontal_line && !s.points.empty()) {
      o += "<line x1=\"" + num(L) + "\" y1=\"" + num(py(s.points[0].y)) + "\" x2=\"" + num(R) + "\" y2=\"" +
           num(py(s.points[0].y)) + "\" stroke=\"" + c + "\" stroke-dasharray=\"6,4\"/>\n";
    } else {
      std::string pts;
      for (const auto& p : s.points) pts += num(px(p.x)) + "," + num(py(p.y)) + " ";
      o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + c + "\" stroke-width=\"2\"/>\n";
      for (const auto& p : s.points) {
        o += "<circle cx=\"" + num(px(p.x)) + "\" cy=\"" + num(py(p.y)) + "\" r=\"3.5\" fill=\"" + c + "\"/>";
        if (!p.label.empty())
          o += "<text x=\"" + num(px(p.x) + 5) + "\" y=\"" + num(py(p.y) - 6) +
               "\" font-size=\"10\" fill=\"" + c + "\">" + esc(p.label) + "</text>";
        o += "\n";
      }
    }
    o += "<rect x=\"" + num(R + 12) + "\" y=\"" + num(T + 18.0 * i) + "\" width=\"12\" height=\"4\" fill=\"" +
         c + "\"/><text x=\"" + num(R + 30) + "\" y=\"" + num(T + 18.0 * i + 6) + "\">" + esc(s.name) +
         "</text>\n";
  }
  return o + "</svg>\n";
}

}  // namespace gpstream::eval
