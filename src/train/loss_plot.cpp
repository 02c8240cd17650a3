// SVG loss curve.
#include "train/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpstream::train {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<')
      o += "&lt;";
    else if (ch == '>')
      o += "&gt;";
    else if (ch == '&')
      o += "&amp;";
    else
      o += ch;
  }
  return o;
}

}  // namespace

std::string loss_curve_svg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& dev,
                           const std::string& title) {
  const double W = 720, H = 420, L = 60, R = 20, T = 40, B = 50;
  double x0 = 0, x1 = 1, y0 = 1e300, y1 = -1e300;
  for (const auto* v : {&train, &dev})
    for (const LossPoint& p : *v) {
      x1 = std::max(x1, p.step);
      if (std::isfinite(p.loss)) y0 = std::min(y0, p.loss), y1 = std::max(y1, p.loss);
    }
  if (y0 > y1) y0 = 0, y1 = 1;
  if (y1 - y0 < 1e-9) y1 = y0 + 1;
  y0 = std::max(0.0, y0 - 0.05 * (y1 - y0));
  auto X = [&](double s) { return L + (s - x0) / (x1 - x0) * (W - L - R); };
  auto Y = [&](double l) { return H - B - (l - y0) / (y1 - y0) * (H - T - B); };
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"420\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"360\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
  s += "<line x1=\"" + fmt("%.1f", L) + "\" y1=\"" + fmt("%.1f", H - B) + "\" x2=\"" + fmt("%.1f", W - R) +
       "\" y2=\"" + fmt("%.1f", H - B) + "\" stroke=\"black\"/>\n";
  s += "<line x1=\"" + fmt("%.1f", L) + "\" y1=\"" + fmt("%.1f", T) + "\" x2=\"" + fmt("%.1f", L) +
       "\" y2=\"" + fmt("%.1f", H - B) + "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double sv = x0 + (x1 - x0) * i / 5, lv = y0 + (y1 - y0) * i / 5;
    s += "<text x=\"" + fmt("%.1f", X(sv)) + "\" y=\"" + fmt("%.1f", H - B + 16) +
         "\" text-anchor=\"middle\">" + fmt("%.0f", sv) + "</text>\n";
    s += "<text x=\"" + fmt("%.1f", L - 6) + "\" y=\"" + fmt("%.1f", Y(lv) + 4) + "\" text-anchor=\"end\">" +
         fmt("%.2f", lv) + "</text>\n";
  }
  s += "<text x=\"360\" y=\"" + fmt("%.1f", H - 12) + "\" text-anchor=\"middle\">optimizer step</text>\n";
  s += "<text x=\"16\" y=\"" + fmt("%.1f", H / 2) + "\" transform=\"rotate(-90 16 " + fmt("%.1f", H / 2) +
       ")\" text-anchor=\"middle\">loss (nats/token)</text>\n";
  if (!train.empty()) {
    s += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
    for (const LossPoint& p : train)
      if (std::isfinite(p.loss)) s += fmt("%.1f", X(p.step)) + "," + fmt("%.1f", Y(p.loss)) + " ";
    s += "\"/>\n";
  }
  for (const LossPoint& p : dev)
    if (std::isfinite(p.loss))
      s += "<circle cx=\"" + fmt("%.1f", X(p.step)) + "\" cy=\"" + fmt("%.1f", Y(p.loss)) +
           "\" r=\"3.5\" fill=\"#d62728\"/>\n";
  s += "<text x=\"" + fmt("%.1f", W - R - 150) + "\" y=\"" + fmt("%.1f", T + 10) +
       "\" fill=\"#1f77b4\">— train loss</text>\n";
  s += "<text x=\"" + fmt("%.1f", W - R - 150) + "\" y=\"" + fmt("%.1f", T + 26) +
       "\" fill=\"#d62728\">● dev loss</text>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace gpstream::train
