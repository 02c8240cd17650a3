// Hand-written SVG quality–latency plots: margins from the text they hold, nice ticks, curves, greedily
// placed point labels and a legend; the unit of a run's delays.
#include "eval/plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>

#include "util/svg.h"

namespace gpstream::eval {
namespace {

using util::format_tick;
using util::svg_num;
using util::svg_text_width;
using util::SvgBox;
using util::TextAnchor;

constexpr std::array<const char*, 8> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr double kTitleSize = 15, kTextSize = 12, kLabelSize = 10;
constexpr double kPad = 10;  // from the canvas edge to any text
constexpr double kMinPlotW = 360, kMinPlotH = 220;
constexpr double kMarkerR = 3.5;
constexpr double kLegendRow = 18, kLegendSwatch = 28, kLegendGap = 16;
constexpr double kLabelHalo = 1.5;  // half the white outline drawn under a point label
constexpr double kLeaderFrom = 7;   // labels this far from their point get a leader line

double line_height(double size) {
  return (util::kSvgAscent + util::kSvgDescent) * size;
}

std::string text_el(const char* cls, double x, double y, double size, TextAnchor anchor,
                    std::string_view text, const std::string& attrs = "") {
  std::string o = std::string("<text class=\"") + cls + "\" x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) +
                  "\" font-size=\"" + svg_num(size) + "\"";
  if (anchor == TextAnchor::Middle) o += " text-anchor=\"middle\"";
  if (anchor == TextAnchor::End) o += " text-anchor=\"end\"";
  return o + attrs + ">" + util::svg_escape(text) + "</text>\n";
}

// Whether the segment (x0, y0)–(x1, y1) meets the box (Liang–Barsky clipping).
bool segment_meets(const SvgBox& b, double x0, double y0, double x1, double y1) {
  double t0 = 0, t1 = 1;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy}, q[4] = {x0 - b.x0, b.x1 - x0, y0 - b.y0, b.y1 - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

struct Segment {
  double x0, y0, x1, y1;
};

struct Marker {
  double x, y;
};

// The distance from (x, y) to the nearest point of the box (0 inside it).
double box_distance(const SvgBox& b, double x, double y) {
  return std::hypot(x - std::clamp(x, b.x0, b.x1), y - std::clamp(y, b.y0, b.y1));
}

constexpr std::array<double, 9> kRings = {1.5, 3, 5, 8, 12, 17, 24, 33, 45};
constexpr std::array<std::array<int, 2>, 8> kDirs = {
    {{1, -1}, {1, 0}, {-1, -1}, {-1, 0}, {1, 1}, {-1, 1}, {0, -1}, {0, 1}}};

// The w × h box at distance d from the marker at (cx, cy) in direction kDirs[di].
SvgBox candidate_box(double cx, double cy, double w, double h, double d, size_t di) {
  const double r = kMarkerR + 1;
  const int sx = kDirs[di][0], sy = kDirs[di][1];
  const double g = sx != 0 && sy != 0 ? 0.7 * d : d;
  SvgBox b;
  b.x0 = sx > 0 ? cx + r + g : sx < 0 ? cx - r - g - w : cx - w / 2;
  b.y0 = sy < 0 ? cy - r - g - h : sy > 0 ? cy + r + g : cy - h / 2;
  b.x1 = b.x0 + w;
  b.y1 = b.y0 + h;
  return b;
}

// How many of the candidate boxes around (cx, cy) lie inside `frame` and clear every marker box: the
// labels with the fewest are placed first, before their few spots are taken by their neighbours' labels.
size_t free_spots(double cx, double cy, double w, double h, const SvgBox& frame,
                  const std::vector<SvgBox>& marker_boxes) {
  size_t n = 0;
  for (double d : kRings)
    for (size_t di = 0; di < kDirs.size(); ++di) {
      const SvgBox b = candidate_box(cx, cy, w, h, d, di);
      if (!frame.contains(b)) continue;
      bool clear = true;
      for (const SvgBox& m : marker_boxes) clear = clear && !m.overlaps(b);
      n += clear ? 1 : 0;
    }
  return n;
}

// The box for a label of size w × h next to a marker at (cx, cy): on each ring of distances, eight directions
// (upper right first). A box must lie inside `frame` and clear every box in `taken` (markers and labels
// placed so far); among those, the cost is the distance plus 25 px per curve segment the box crosses, so a
// label moves a little further out rather than sit on a line, and plus 50 px when another of the `markers` is
// nearer the box than its own point and no leader line (from kLeaderFrom on) will say whose label it is, so
// that where two points lie close together each label stays on its own point's side rather than beside the
// other one, and plus 50 px per taken box (another label or point) that such a leader line would cross.
// Without any clear box (a crowded plot), the one that overlaps the fewest taken boxes. `gap` receives the
// chosen distance.
SvgBox place_label(double cx, double cy, double w, double h, const SvgBox& frame,
                   const std::vector<SvgBox>& taken, const std::vector<Segment>& lines,
                   const std::vector<Marker>& markers, double* gap) {
  const double r = kMarkerR + 1;
  double best_cost = std::numeric_limits<double>::infinity();
  size_t best_overlaps = std::numeric_limits<size_t>::max();
  SvgBox best{cx + r, cy - r - h, cx + r + w, cy - r};
  SvgBox fallback = best;
  double best_gap = 0, fallback_gap = 0;
  for (double d : kRings) {
    for (size_t di = 0; di < kDirs.size(); ++di) {
      const SvgBox b = candidate_box(cx, cy, w, h, d, di);
      if (!frame.contains(b)) continue;
      size_t overlaps = 0;
      for (const SvgBox& t : taken) overlaps += t.overlaps(b) ? 1 : 0;
      if (overlaps > 0) {
        if (overlaps < best_overlaps) best_overlaps = overlaps, fallback = b, fallback_gap = d;
        continue;
      }
      size_t crossings = 0;
      for (const Segment& s : lines) crossings += segment_meets(b, s.x0, s.y0, s.x1, s.y1) ? 1 : 0;
      bool ambiguous = false;
      size_t leader_crossings = 0;
      if (d < kLeaderFrom) {
        const double own = box_distance(b, cx, cy);
        for (const Marker& m : markers)
          if ((m.x != cx || m.y != cy) && box_distance(b, m.x, m.y) < own) ambiguous = true;
      } else {
        // The leader line render_svg draws: from the point to the nearest point of the text's box.
        const SvgBox text = b.grown(-kLabelHalo);
        const double nx = std::clamp(cx, text.x0, text.x1), ny = std::clamp(cy, text.y0, text.y1);
        for (const SvgBox& t : taken)
          if (!t.contains(SvgBox{cx, cy, cx, cy}) && segment_meets(t, cx, cy, nx, ny)) ++leader_crossings;
      }
      const double cost = d + 25.0 * static_cast<double>(crossings) + (ambiguous ? 50.0 : 0.0) +
                          50.0 * static_cast<double>(leader_crossings) + 0.01 * static_cast<double>(di);
      if (cost < best_cost) best_cost = cost, best = b, best_gap = d;
    }
  }
  if (std::isfinite(best_cost)) {
    *gap = best_gap;
    return best;
  }
  *gap = fallback_gap;
  return fallback;
}

bool finite_point(const PlotPoint& p) {
  return std::isfinite(p.x) && std::isfinite(p.y);
}

}  // namespace

std::string render_svg(const PlotSpec& spec, int width, int height) {
  // Data ranges: curves set x, every point sets y (an offline line spans whatever x the curves need).
  constexpr double inf = std::numeric_limits<double>::infinity();
  double x0 = inf, x1 = -inf, y0 = inf, y1 = -inf;
  for (const auto& s : spec.series)
    for (const auto& p : s.points) {
      if (!finite_point(p)) continue;
      if (!s.horizontal_line) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
      y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  if (!(x0 <= x1)) x0 = 0, x1 = 1;
  if (!(y0 <= y1)) y0 = 0, y1 = 1;
  // 3 % of room on each side, so that no point sits on the frame.
  const double xm = 0.03 * (x1 - x0), ym = 0.03 * (y1 - y0);
  x0 -= xm, x1 += xm, y0 -= ym, y1 += ym;

  // Legend: one row per series, as wide as its widest entry.
  const size_t n_series = spec.series.size();
  double legend_text_w = 0;
  for (const auto& s : spec.series)
    legend_text_w = std::max(legend_text_w, svg_text_width(s.name, kTextSize));
  const double legend_w = n_series ? 8 + kLegendSwatch + 6 + legend_text_w + 8 : 0;
  const double legend_h = n_series ? 6 + kLegendRow * static_cast<double>(n_series) + 4 : 0;

  // Vertical layout: the title band, the plot (tall enough for the legend and the y title), the x tick labels
  // and the x title.
  const double T = spec.title.empty() ? kPad + 8 : kPad + line_height(kTitleSize) + 12;
  const double bottom = 6 + line_height(kTextSize) + 6 + line_height(kTextSize) + kPad;
  const double H = std::ceil(std::max<double>(
      height, T + std::max({kMinPlotH, legend_h, svg_text_width(spec.y_label, kTextSize) + 8}) + bottom));
  const double B = H - bottom;

  // y ticks: as many as keep two text heights between neighbours.
  util::AxisTicks yt;
  for (int n = 10; n >= 2; --n) {
    yt = util::nice_ticks(y0, y1, n);
    if ((B - T) / static_cast<double>(yt.values.size() - 1) >= 2 * kTextSize) break;
  }
  double y_tick_w = 0;
  for (double v : yt.values)
    y_tick_w = std::max(y_tick_w, svg_text_width(format_tick(v, yt.decimals), kTextSize));
  double L = kPad + line_height(kTextSize) + 8 + y_tick_w + 6;

  // Horizontal layout: the plot (wide enough for the x title), then the legend; the title spans the canvas.
  const double right = n_series ? kLegendGap + legend_w + kPad : kPad;
  double W = std::max({static_cast<double>(width),
                       L + std::max(kMinPlotW, svg_text_width(spec.x_label, kTextSize)) + right,
                       svg_text_width(spec.title, kTitleSize) + 2 * kPad});
  W = std::ceil(W);
  const double R = W - right;

  // x ticks: as many as keep their labels 8 px apart; the outer labels may not leave the canvas.
  util::AxisTicks xt;
  std::vector<double> x_tick_w;
  for (int n = 10; n >= 2; --n) {
    xt = util::nice_ticks(x0, x1, n);
    x_tick_w.clear();
    double widest = 0;
    for (double v : xt.values) {
      x_tick_w.push_back(svg_text_width(format_tick(v, xt.decimals), kTextSize));
      widest = std::max(widest, x_tick_w.back());
    }
    if ((R - L) / static_cast<double>(xt.values.size() - 1) >= widest + 8) break;
  }
  L = std::max(L, kPad + x_tick_w.front() / 2);
  W = std::max(W, std::ceil(R + x_tick_w.back() / 2 + kPad));

  auto px = [&](double x) { return L + (x - xt.lo) / (xt.hi - xt.lo) * (R - L); };
  auto py = [&](double y) { return B - (y - yt.lo) / (yt.hi - yt.lo) * (B - T); };

  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_num(W) + "\" height=\"" +
                  svg_num(H) + "\" viewBox=\"0 0 " + svg_num(W) + " " + svg_num(H) + "\" font-family=\"" +
                  util::kSvgFontFamily + "\" font-size=\"" + svg_num(kTextSize) + "\">\n";
  o += "<rect width=\"" + svg_num(W) + "\" height=\"" + svg_num(H) + "\" fill=\"white\"/>\n";
  if (!spec.title.empty())
    o += text_el("title", W / 2, kPad + util::kSvgAscent * kTitleSize, kTitleSize, TextAnchor::Middle,
                 spec.title);
  for (size_t i = 0; i < xt.values.size(); ++i) {
    const double x = px(xt.values[i]);
    o += "<line x1=\"" + svg_num(x) + "\" y1=\"" + svg_num(T) + "\" x2=\"" + svg_num(x) + "\" y2=\"" +
         svg_num(B) + "\" stroke=\"#eee\"/>\n";
    o += text_el("tick", x, B + 6 + util::kSvgAscent * kTextSize, kTextSize, TextAnchor::Middle,
                 format_tick(xt.values[i], xt.decimals));
  }
  for (double v : yt.values) {
    const double y = py(v);
    o += "<line x1=\"" + svg_num(L) + "\" y1=\"" + svg_num(y) + "\" x2=\"" + svg_num(R) + "\" y2=\"" +
         svg_num(y) + "\" stroke=\"#eee\"/>\n";
    o += text_el("tick", L - 6, y + 0.5 * (util::kSvgAscent - util::kSvgDescent) * kTextSize, kTextSize,
                 TextAnchor::End, format_tick(v, yt.decimals));
  }
  o += "<rect x=\"" + svg_num(L) + "\" y=\"" + svg_num(T) + "\" width=\"" + svg_num(R - L) + "\" height=\"" +
       svg_num(B - T) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  o += text_el("axis-title", (L + R) / 2, H - kPad - util::kSvgDescent * kTextSize, kTextSize,
               TextAnchor::Middle, spec.x_label);
  const double yt_x = kPad + util::kSvgAscent * kTextSize, yt_y = (T + B) / 2;
  o += text_el("axis-title", yt_x, yt_y, kTextSize, TextAnchor::Middle, spec.y_label,
               " transform=\"rotate(-90 " + svg_num(yt_x) + " " + svg_num(yt_y) + ")\"");

  // Curves and offline lines, then the markers, then the labels on top.
  std::vector<Segment> lines;
  std::vector<SvgBox> taken;
  std::vector<Marker> markers;
  for (size_t i = 0; i < n_series; ++i) {
    const auto& s = spec.series[i];
    const std::string c = kColors[i % kColors.size()];
    if (s.horizontal_line) {
      const auto p = std::find_if(s.points.begin(), s.points.end(), finite_point);
      if (p == s.points.end()) continue;
      const double y = py(p->y);
      o += "<line x1=\"" + svg_num(L) + "\" y1=\"" + svg_num(y) + "\" x2=\"" + svg_num(R) + "\" y2=\"" +
           svg_num(y) + "\" stroke=\"" + c + "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
      lines.push_back({L, y, R, y});
      continue;
    }
    std::string pts;
    double lx = 0, ly = 0;
    bool first = true;
    for (const auto& p : s.points) {
      if (!finite_point(p)) continue;
      const double x = px(p.x), y = py(p.y);
      pts += svg_num(x) + "," + svg_num(y) + " ";
      if (!first) lines.push_back({lx, ly, x, y});
      lx = x, ly = y, first = false;
      taken.push_back(SvgBox{x - kMarkerR, y - kMarkerR, x + kMarkerR, y + kMarkerR}.grown(1));
      markers.push_back({x, y});
    }
    o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + c + "\" stroke-width=\"2\"/>\n";
  }
  for (size_t i = 0; i < n_series; ++i) {
    const auto& s = spec.series[i];
    if (s.horizontal_line) continue;
    for (const auto& p : s.points)
      if (finite_point(p))
        o += "<circle cx=\"" + svg_num(px(p.x)) + "\" cy=\"" + svg_num(py(p.y)) + "\" r=\"" +
             svg_num(kMarkerR) + "\" fill=\"" + kColors[i % kColors.size()] + "\"/>\n";
  }
  const SvgBox frame{L + 1, T + 1, R - 1, B - 1};
  const double label_h = line_height(kLabelSize);
  // Labels are placed fewest free spots first (ties in series and point order) and written in series and
  // point order.
  struct Label {
    size_t series;
    const PlotPoint* point;
    double cx, cy, w;
    size_t spots;
    SvgBox halo;
    double gap;
  };
  std::vector<Label> labels;
  const std::vector<SvgBox> marker_boxes = taken;
  for (size_t i = 0; i < n_series; ++i) {
    const auto& s = spec.series[i];
    if (s.horizontal_line) continue;
    for (const auto& p : s.points) {
      if (!finite_point(p) || p.label.empty()) continue;
      const double cx = px(p.x), cy = py(p.y);
      const double w = svg_text_width(p.label, kLabelSize) + 2 * kLabelHalo;
      labels.push_back(
          {i, &p, cx, cy, w, free_spots(cx, cy, w, label_h + 2 * kLabelHalo, frame, marker_boxes), {}, 0});
    }
  }
  std::vector<size_t> order(labels.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return labels[a].spots < labels[b].spots; });
  for (size_t k : order) {
    Label& l = labels[k];
    l.halo = place_label(l.cx, l.cy, l.w, label_h + 2 * kLabelHalo, frame, taken, lines, markers, &l.gap);
    taken.push_back(l.halo);
    if (l.gap >= kLeaderFrom) {
      // Later labels keep off the leader line as off the curves.
      const SvgBox b = l.halo.grown(-kLabelHalo);
      lines.push_back({l.cx, l.cy, std::clamp(l.cx, b.x0, b.x1), std::clamp(l.cy, b.y0, b.y1)});
    }
  }
  for (const Label& l : labels) {
    const std::string c = kColors[l.series % kColors.size()];
    const SvgBox b = l.halo.grown(-kLabelHalo);
    const double cx = l.cx, cy = l.cy;
    if (l.gap >= kLeaderFrom) {
      const double nx = std::clamp(cx, b.x0, b.x1), ny = std::clamp(cy, b.y0, b.y1);
      const double len = std::hypot(nx - cx, ny - cy);
      if (len > kMarkerR + 1) {
        o += "<line x1=\"" + svg_num(cx + (nx - cx) / len * kMarkerR) + "\" y1=\"" +
             svg_num(cy + (ny - cy) / len * kMarkerR) + "\" x2=\"" + svg_num(nx) + "\" y2=\"" + svg_num(ny) +
             "\" stroke=\"" + c + "\" stroke-width=\"0.75\"/>\n";
      }
    }
    o += text_el("point-label", b.x0, b.y1 - util::kSvgDescent * kLabelSize, kLabelSize, TextAnchor::Start,
                 l.point->label,
                 " fill=\"" + c + "\" stroke=\"white\" stroke-width=\"" + svg_num(2 * kLabelHalo) +
                     "\" paint-order=\"stroke\"");
  }

  // Legend, right of the plot.
  if (n_series) {
    const double lx = R + kLegendGap;
    o += "<rect x=\"" + svg_num(lx) + "\" y=\"" + svg_num(T) + "\" width=\"" + svg_num(legend_w) +
         "\" height=\"" + svg_num(legend_h) + "\" fill=\"white\" stroke=\"#ccc\"/>\n";
    for (size_t i = 0; i < n_series; ++i) {
      const auto& s = spec.series[i];
      const std::string c = kColors[i % kColors.size()];
      const double cy = T + 6 + kLegendRow * static_cast<double>(i) + kLegendRow / 2;
      o += "<line x1=\"" + svg_num(lx + 8) + "\" y1=\"" + svg_num(cy) + "\" x2=\"" +
           svg_num(lx + 8 + kLegendSwatch) + "\" y2=\"" + svg_num(cy) + "\" stroke=\"" + c +
           "\" stroke-width=\"" + (s.horizontal_line ? "1.5\" stroke-dasharray=\"6,4\"/>\n" : "2\"/>\n");
      if (!s.horizontal_line)
        o += "<circle cx=\"" + svg_num(lx + 8 + kLegendSwatch / 2) + "\" cy=\"" + svg_num(cy) + "\" r=\"" +
             svg_num(kMarkerR) + "\" fill=\"" + c + "\"/>\n";
      o += text_el("legend", lx + 8 + kLegendSwatch + 6,
                   cy + 0.5 * (util::kSvgAscent - util::kSvgDescent) * kTextSize, kTextSize,
                   TextAnchor::Start, s.name);
    }
  }
  return o + "</svg>\n";
}

const char* delay_unit_name(DelayUnit unit) {
  return unit == DelayUnit::Ms ? "ms" : "source words";
}

DelayUnit delay_unit_of(const InstanceRecord& record) {
  return record.source_length_int ? DelayUnit::SourceWords : DelayUnit::Ms;
}

Result<DelayUnit> read_delay_unit(const std::string& instances_log_path) {
  std::ifstream in(instances_log_path);
  if (!in) return not_found(instances_log_path + ": cannot open");
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    GPS_ASSIGN(InstanceRecord r, parse_instance_line(line, instances_log_path + ":" + std::to_string(n)));
    return delay_unit_of(r);
  }
  return format_error(instances_log_path + ": no instances");
}

std::string axis_title(std::string_view metric, std::optional<DelayUnit> unit) {
  std::string_view base = metric;
  if (base.size() > 3 && base.substr(base.size() - 3) == "_CA") base.remove_suffix(3);
  static constexpr std::array<std::string_view, 6> kTimed = {"AL",  "LAAL",        "DAL",
                                                             "ATD", "StartOffset", "EndOffset"};
  const bool timed = std::find(kTimed.begin(), kTimed.end(), base) != kTimed.end();
  if (!timed || !unit) return std::string(metric);
  return std::string(metric) + " (" + delay_unit_name(*unit) + ")";
}

}  // namespace gpstream::eval
