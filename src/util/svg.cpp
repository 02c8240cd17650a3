// SVG text, numbers, text extents and nice ticks.
#include "util/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpstream::util {
namespace {

// DejaVu Sans (2.37) advance widths of the printable ASCII characters, in 1/1000 em (hmtx / unitsPerEm 2048).
constexpr int kAsciiWidths[95] = {
    318,  401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,  //  !"#$%&'()*+,-./
    636,  636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,  // 0123456789:;<=>?
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,  // @ABCDEFGHIJKLMNO
    603,  787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,  // PQRSTUVWXYZ[\]^_
    500,  613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,  // `abcdefghijklmno
    635,  635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,       // pqrstuvwxyz{|}~
};
constexpr double kFallbackMargin = 1.08;

}  // namespace

std::string svg_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
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

std::string svg_num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return std::string(b) == "-0.0" ? "0.0" : b;
}

double svg_text_width(std::string_view text, double font_size) {
  double em = 0;
  for (unsigned char c : text) {
    if (c >= 32 && c < 127)
      em += kAsciiWidths[c - 32] / 1000.0;
    else if ((c & 0xC0) != 0x80)  // a control character or the first byte of a non-ASCII code point
      em += 1.0;
  }
  return em * font_size * kFallbackMargin;
}

SvgBox svg_text_box(double x, double baseline, std::string_view text, double font_size, TextAnchor anchor) {
  const double w = svg_text_width(text, font_size);
  const double x0 = anchor == TextAnchor::Start ? x : anchor == TextAnchor::Middle ? x - w / 2 : x - w;
  return {x0, baseline - kSvgAscent * font_size, x0 + w, baseline + kSvgDescent * font_size};
}

AxisTicks nice_ticks(double lo, double hi, int max_intervals) {
  max_intervals = std::max(max_intervals, 2);
  if (!(hi > lo)) {
    const double d = lo == 0 ? 1 : std::fabs(lo) / 10;
    lo -= d, hi += d;
  }
  const double ideal = (hi - lo) / max_intervals;
  const int e0 = static_cast<int>(std::floor(std::log10(ideal))) - 1;
  AxisTicks t;
  // 10^e0 ≤ ideal / 10, below every step that fits. A step wider than hi − lo spans at most 2 intervals, so
  // the loop ends long before e0 + 40.
  for (int e = e0; e <= e0 + 40; ++e) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      // 10^e as a quotient for negative e, so that 0.1 is the double nearest 0.1.
      const double step = e >= 0 ? m * std::pow(10.0, e) : m / std::pow(10.0, -e);
      const double a = std::floor(lo / step + 1e-9), b = std::max(a + 1, std::ceil(hi / step - 1e-9));
      if (b - a > max_intervals) continue;
      t.step = step;
      t.lo = a * step;
      t.hi = b * step;
      t.decimals = std::max(0, (m == 2.5 ? 1 : 0) - e);
      for (double i = a; i <= b; ++i) t.values.push_back(i * step);
      return t;
    }
  }
  // Unreachable for finite input (see above); one interval keeps the result well-formed.
  t.lo = lo, t.hi = hi, t.step = hi - lo, t.values = {lo, hi};
  return t;
}

std::string format_tick(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  std::string s = b;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

}  // namespace gpstream::util
