// Pieces of the hand-written SVG plots (eval/plot.h, train/loss_plot.h): text escaping, coordinates, "nice"
// axis ticks (steps of 1, 2, 2.5 or 5 × 10^n), and a conservative estimate of the box a line of text takes in
// the font the plots ask for, so that a layout can keep text apart and inside the canvas without a renderer.
// No drawing here: the plots write their own elements.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpstream::util {

// The font family every plot sets. The width estimate below is DejaVu Sans's; Verdana's advance widths are
// within a few per cent of it, and Liberation Sans, Arial and Helvetica are narrower.
inline constexpr const char* kSvgFontFamily = "DejaVu Sans, Verdana, sans-serif";
// DejaVu Sans's ascent and descent, in em: the vertical extent of any line of it around its baseline.
inline constexpr double kSvgAscent = 0.93, kSvgDescent = 0.24;

// Text for SVG character data and attribute values: & < > " escaped.
std::string svg_escape(std::string_view s);
// A coordinate or length: one decimal ("12.5").
std::string svg_num(double v);

// Width in px of one line of UTF-8 text at font_size px: the sum of DejaVu Sans's advance widths of its ASCII
// characters, 1 em for any other code point (CJK glyphs are 1 em; Latin and Greek letters are narrower), plus
// 8 % for a fallback font a little wider than DejaVu Sans: meant as an upper bound (the slow test PlotRender
// checks it against rsvg-convert's rendering).
double svg_text_width(std::string_view text, double font_size);

// An axis-aligned box in canvas px (y grows downwards).
struct SvgBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool overlaps(const SvgBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool contains(const SvgBox& o) const { return x0 <= o.x0 && o.x1 <= x1 && y0 <= o.y0 && o.y1 <= y1; }
  SvgBox grown(double d) const { return {x0 - d, y0 - d, x1 + d, y1 + d}; }
};

enum class TextAnchor { Start, Middle, End };

// The box of one unrotated line of text whose anchor point is (x, baseline): svg_text_width wide, from
// kSvgAscent above the baseline to kSvgDescent below it.
SvgBox svg_text_box(double x, double baseline, std::string_view text, double font_size, TextAnchor anchor);

// Ticks for an axis over [lo, hi]: the smallest step of 1, 2, 2.5 or 5 × 10^n for which the range, widened
// to whole steps (lo rounded down, hi rounded up), spans at most max_intervals steps. A range of width 0 is
// widened to [v − 1, v + 1] (v = 0) or [v − |v|/10, v + |v|/10] first. lo <= hi, both finite; max_intervals
// below 2 counts as 2 (a range around 0 needs two).
struct AxisTicks {
  double lo = 0, hi = 1, step = 1;  // the widened range and the step
  int decimals = 0;                 // the digits after the point that the step needs (2.5 → 1, 0.05 → 2)
  std::vector<double> values;       // lo, lo + step, ..., hi
};
AxisTicks nice_ticks(double lo, double hi, int max_intervals);
// A tick value with the ticks' decimals ("2.5", "1500", never "-0").
std::string format_tick(double v, int decimals);

}  // namespace gpstream::util
