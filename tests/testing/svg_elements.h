// Reading back what the plots wrote: the <text> and <circle> elements of an SVG string, the canvas size, and
// each text's box from its attributes (util::svg_text_box, whose widths the slow render test checks against
// rsvg-convert's), so that tests can check titles, legends, ticks and overlaps on the SVG itself.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "util/svg.h"

namespace gpstream::testing {

struct SvgText {
  std::string cls, text, anchor = "start";
  double x = 0, y = 0, size = 0;
  bool rotated = false;  // rotate(-90 x y), the y axis title
  util::SvgBox box() const {
    const util::TextAnchor a = anchor == "middle" ? util::TextAnchor::Middle
                               : anchor == "end"  ? util::TextAnchor::End
                                                  : util::TextAnchor::Start;
    const util::SvgBox b = util::svg_text_box(x, y, text, size, a);
    if (!rotated) return b;
    // Turned a quarter counter-clockwise about (x, y): (x + dx, y + dy) goes to (x + dy, y − dx).
    return {x + (b.y0 - y), y - (b.x1 - x), x + (b.y1 - y), y - (b.x0 - x)};
  }
};

struct SvgCircle {
  double cx = 0, cy = 0, r = 0;
  util::SvgBox box() const { return {cx - r, cy - r, cx + r, cy + r}; }
};

inline std::string svg_attr(const std::string& attrs, const std::string& name) {
  std::smatch m;
  const std::regex re("(?:^|\\s)" + name + "=\"([^\"]*)\"");
  return std::regex_search(attrs, m, re) ? m[1].str() : "";
}

inline std::string svg_unescape(std::string s) {
  const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities)
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += std::string(to).size())
      s.replace(p, std::string(from).size(), to);
  return s;
}

inline std::vector<SvgText> svg_texts(const std::string& svg, const std::string& cls = "") {
  std::vector<SvgText> out;
  const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1].str();
    SvgText t;
    t.cls = svg_attr(attrs, "class");
    if (!cls.empty() && t.cls != cls) continue;
    t.text = svg_unescape((*it)[2].str());
    t.x = std::stod(svg_attr(attrs, "x"));
    t.y = std::stod(svg_attr(attrs, "y"));
    t.size = std::stod(svg_attr(attrs, "font-size"));
    if (const std::string a = svg_attr(attrs, "text-anchor"); !a.empty()) t.anchor = a;
    t.rotated = svg_attr(attrs, "transform").rfind("rotate(-90", 0) == 0;
    out.push_back(t);
  }
  return out;
}

inline std::vector<std::string> svg_strings(const std::vector<SvgText>& texts) {
  std::vector<std::string> out;
  for (const auto& t : texts) out.push_back(t.text);
  return out;
}

inline std::vector<SvgCircle> svg_circles(const std::string& svg) {
  std::vector<SvgCircle> out;
  const std::regex re("<circle([^>]*)/>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1].str();
    out.push_back({std::stod(svg_attr(attrs, "cx")), std::stod(svg_attr(attrs, "cy")),
                   std::stod(svg_attr(attrs, "r"))});
  }
  return out;
}

// The canvas: the root element's width and height.
inline util::SvgBox svg_canvas(const std::string& svg) {
  const size_t open = svg.find("<svg"), close = svg.find('>', open);
  const std::string attrs = svg.substr(open + 4, close - open - 4);
  return {0, 0, std::stod(svg_attr(attrs, "width")), std::stod(svg_attr(attrs, "height"))};
}

}  // namespace gpstream::testing
