// SVG loss curve: raw training losses, their moving average, dev losses.
#include "train/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "train/run_folder.h"
#include "util/svg.h"

namespace gpstream::train {
namespace {

using util::format_tick;
using util::svg_num;
using util::svg_text_width;

constexpr double kTitleSize = 15, kTextSize = 12, kPad = 10;
constexpr double kPlotW = 560, kPlotH = 300;
constexpr double kLegendRow = 18, kLegendSwatch = 28, kLegendGap = 16;
constexpr const char* kTrainColor = "#1f77b4";
constexpr const char* kDevColor = "#d62728";

double line_height(double size) {
  return (util::kSvgAscent + util::kSvgDescent) * size;
}

std::string text_el(const char* cls, double x, double y, double size, const char* anchor,
                    const std::string& text, const std::string& attrs = "") {
  return std::string("<text class=\"") + cls + "\" x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) +
         "\" font-size=\"" + svg_num(size) + "\" text-anchor=\"" + anchor + "\"" + attrs + ">" +
         util::svg_escape(text) + "</text>\n";
}

}  // namespace

int loss_ema_span(size_t n) {
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(n) / 100.0)));
}

std::vector<LossPoint> loss_ema(const std::vector<LossPoint>& train, int span) {
  const double alpha = 2.0 / (std::max(span, 1) + 1.0);
  std::vector<LossPoint> out;
  for (const LossPoint& p : train) {
    if (!std::isfinite(p.loss)) continue;
    out.push_back({p.step, out.empty() ? p.loss : out.back().loss + alpha * (p.loss - out.back().loss)});
  }
  return out;
}

std::string loss_curve_svg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& dev,
                           const std::string& title) {
  // Ranges: steps from 0, losses over every finite point.
  double x1 = 0, y0 = std::numeric_limits<double>::infinity(), y1 = -y0;
  size_t n_train = 0;
  for (const auto* v : {&train, &dev})
    for (const LossPoint& p : *v) {
      if (!std::isfinite(p.loss) || !std::isfinite(p.step)) continue;
      x1 = std::max(x1, p.step);
      y0 = std::min(y0, p.loss), y1 = std::max(y1, p.loss);
      n_train += v == &train ? 1 : 0;
    }
  if (!(y0 <= y1)) y0 = 0, y1 = 1;
  if (!(x1 > 0)) x1 = 1;
  y0 -= 0.03 * (y1 - y0), y1 += 0.03 * (y1 - y0);  // no point on the frame
  const int span = loss_ema_span(n_train);
  const std::vector<LossPoint> ema = loss_ema(train, span);

  // Legend entries, right of the plot.
  std::vector<std::string> legend = {
      "train loss (each step)", "train loss, moving average (span " + std::to_string(span) + ")", "dev loss"};
  double legend_text_w = 0;
  for (const auto& s : legend) legend_text_w = std::max(legend_text_w, svg_text_width(s, kTextSize));
  const double legend_w = 8 + kLegendSwatch + 6 + legend_text_w + 8;
  const double legend_h = 6 + kLegendRow * static_cast<double>(legend.size()) + 4;

  const double T = kPad + line_height(kTitleSize) + 12;
  const double B = T + kPlotH, H = B + 6 + 2 * line_height(kTextSize) + 6 + kPad;
  util::AxisTicks yt;
  for (int n = 10; n >= 2; --n) {
    yt = util::nice_ticks(y0, y1, n);
    if (kPlotH / static_cast<double>(yt.values.size() - 1) >= 2 * kTextSize) break;
  }
  double y_tick_w = 0;
  for (double v : yt.values)
    y_tick_w = std::max(y_tick_w, svg_text_width(format_tick(v, yt.decimals), kTextSize));
  const double L = kPad + line_height(kTextSize) + 8 + y_tick_w + 6, R = L + kPlotW;
  util::AxisTicks xt;
  double last_w = 0;
  for (int n = 10; n >= 2; --n) {
    xt = util::nice_ticks(0, x1, n);
    double widest = 0;
    for (double v : xt.values)
      widest = std::max(widest, svg_text_width(format_tick(v, xt.decimals), kTextSize));
    last_w = svg_text_width(format_tick(xt.values.back(), xt.decimals), kTextSize);
    if (kPlotW / static_cast<double>(xt.values.size() - 1) >= widest + 8) break;
  }
  const double W = std::ceil(std::max({R + std::max(kLegendGap + legend_w, last_w / 2) + kPad,
                                       svg_text_width(title, kTitleSize) + 2 * kPad}));
  auto X = [&](double s) { return L + (s - xt.lo) / (xt.hi - xt.lo) * (R - L); };
  auto Y = [&](double l) { return B - (l - yt.lo) / (yt.hi - yt.lo) * (B - T); };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_num(W) + "\" height=\"" +
                  svg_num(H) + "\" viewBox=\"0 0 " + svg_num(W) + " " + svg_num(H) + "\" font-family=\"" +
                  util::kSvgFontFamily + "\" font-size=\"" + svg_num(kTextSize) + "\">\n";
  s += "<rect width=\"" + svg_num(W) + "\" height=\"" + svg_num(H) + "\" fill=\"white\"/>\n";
  s += text_el("title", W / 2, kPad + util::kSvgAscent * kTitleSize, kTitleSize, "middle", title);
  for (double v : xt.values) {
    s += "<line x1=\"" + svg_num(X(v)) + "\" y1=\"" + svg_num(T) + "\" x2=\"" + svg_num(X(v)) + "\" y2=\"" +
         svg_num(B) + "\" stroke=\"#eee\"/>\n";
    s += text_el("tick", X(v), B + 6 + util::kSvgAscent * kTextSize, kTextSize, "middle",
                 format_tick(v, xt.decimals));
  }
  for (double v : yt.values) {
    s += "<line x1=\"" + svg_num(L) + "\" y1=\"" + svg_num(Y(v)) + "\" x2=\"" + svg_num(R) + "\" y2=\"" +
         svg_num(Y(v)) + "\" stroke=\"#eee\"/>\n";
    s += text_el("tick", L - 6, Y(v) + 0.5 * (util::kSvgAscent - util::kSvgDescent) * kTextSize, kTextSize,
                 "end", format_tick(v, yt.decimals));
  }
  s += "<rect x=\"" + svg_num(L) + "\" y=\"" + svg_num(T) + "\" width=\"" + svg_num(R - L) + "\" height=\"" +
       svg_num(B - T) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  s += text_el("axis-title", (L + R) / 2, H - kPad - util::kSvgDescent * kTextSize, kTextSize, "middle",
               "optimizer step");
  const double yx = kPad + util::kSvgAscent * kTextSize, yy = (T + B) / 2;
  s += text_el("axis-title", yx, yy, kTextSize, "middle", "loss (nats/token)",
               " transform=\"rotate(-90 " + svg_num(yx) + " " + svg_num(yy) + ")\"");
  auto polyline = [&](const std::vector<LossPoint>& pts, const std::string& attrs) {
    std::string o =
        "<polyline fill=\"none\" stroke=\"" + std::string(kTrainColor) + "\"" + attrs + " points=\"";
    for (const LossPoint& p : pts)
      if (std::isfinite(p.loss) && std::isfinite(p.step))
        o += svg_num(X(p.step)) + "," + svg_num(Y(p.loss)) + " ";
    return o + "\"/>\n";
  };
  if (!train.empty()) {
    s += polyline(train, " stroke-width=\"1\" stroke-opacity=\"0.35\"");
    s += polyline(ema, " stroke-width=\"2\"");
  }
  for (const LossPoint& p : dev)
    if (std::isfinite(p.loss) && std::isfinite(p.step))
      s += "<circle cx=\"" + svg_num(X(p.step)) + "\" cy=\"" + svg_num(Y(p.loss)) + "\" r=\"3.5\" fill=\"" +
           kDevColor + "\"/>\n";

  const double lx = R + kLegendGap;
  s += "<rect x=\"" + svg_num(lx) + "\" y=\"" + svg_num(T) + "\" width=\"" + svg_num(legend_w) +
       "\" height=\"" + svg_num(legend_h) + "\" fill=\"white\" stroke=\"#ccc\"/>\n";
  for (size_t i = 0; i < legend.size(); ++i) {
    const double cy = T + 6 + kLegendRow * static_cast<double>(i) + kLegendRow / 2;
    const std::string x0 = svg_num(lx + 8), x1s = svg_num(lx + 8 + kLegendSwatch), ys = svg_num(cy);
    if (i == 0)
      s += "<line x1=\"" + x0 + "\" y1=\"" + ys + "\" x2=\"" + x1s + "\" y2=\"" + ys + "\" stroke=\"" +
           kTrainColor + "\" stroke-width=\"1\" stroke-opacity=\"0.35\"/>\n";
    if (i == 1)
      s += "<line x1=\"" + x0 + "\" y1=\"" + ys + "\" x2=\"" + x1s + "\" y2=\"" + ys + "\" stroke=\"" +
           kTrainColor + "\" stroke-width=\"2\"/>\n";
    if (i == 2)
      s += "<circle cx=\"" + svg_num(lx + 8 + kLegendSwatch / 2) + "\" cy=\"" + ys + "\" r=\"3.5\" fill=\"" +
           kDevColor + "\"/>\n";
    s +=
        text_el("legend", lx + 8 + kLegendSwatch + 6,
                cy + 0.5 * (util::kSvgAscent - util::kSvgDescent) * kTextSize, kTextSize, "start", legend[i]);
  }
  return s + "</svg>\n";
}

Status write_loss_plot(const std::string& metrics_path, const std::string& svg_path,
                       const std::string& title) {
  std::vector<LossPoint> train, dev;
  read_loss_curve(metrics_path, train, dev);
  return write_text_file(svg_path, loss_curve_svg(train, dev, title));
}

}  // namespace gpstream::train
