// eval/plot.h: the quality–latency SVG read back as text — axis titles with their unit, legend entries,
// hand-derived ticks, point labels clear of each other and of every point and nearer their own point than any
// other, leader lines clear of the other labels, all text inside the canvas — and the delay unit of an
// instances.log.
#include "eval/plot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "../testing/svg_elements.h"
#include "../testing/temp_dir.h"

namespace gpstream {
namespace {

using testing::svg_strings;
using testing::svg_texts;

// docs/results.md, table c: LAAL_CA (ms) and BLEU per k = 1..9, group and interleaved, and offline.
eval::PlotSpec results_spec(const std::string& x_label) {
  const double group_x[] = {755, 1084, 1455, 1827, 2205, 2562, 2906, 3208, 3481};
  const double group_y[] = {21.71, 35.21, 37.45, 40.22, 41.33, 40.71, 40.84, 41.60, 41.09};
  const double inter_x[] = {739, 1118, 1453, 1835, 2239, 2601, 2932, 3223, 3509};
  const double inter_y[] = {22.53, 30.19, 35.64, 36.14, 34.76, 33.75, 34.86, 36.72, 35.57};
  eval::PlotSpec spec{"en-fr: BLEU vs computation-aware LAAL", x_label, "BLEU", {}};
  eval::PlotSeries g{"group", {}, false}, i{"interleaved", {}, false};
  for (int k = 1; k <= 9; ++k) {
    g.points.push_back({group_x[k - 1], group_y[k - 1], "k=" + std::to_string(k)});
    i.points.push_back({inter_x[k - 1], inter_y[k - 1], "k=" + std::to_string(k)});
  }
  spec.series = {g, i, {"group, offline", {{0, 40.63, ""}}, true}};
  return spec;
}

// Every point label clear of every other label and of every marker; every text inside the canvas.
void expect_readable(const std::string& svg) {
  const util::SvgBox canvas = testing::svg_canvas(svg);
  for (const auto& t : svg_texts(svg)) {
    const util::SvgBox b = t.box();
    EXPECT_TRUE(canvas.contains(b)) << t.cls << " '" << t.text << "' [" << b.x0 << ", " << b.y0 << ", "
                                    << b.x1 << ", " << b.y1 << "] leaves the " << canvas.x1 << " x "
                                    << canvas.y1 << " canvas";
  }
  const auto labels = svg_texts(svg, "point-label");
  const auto circles = testing::svg_circles(svg);
  for (size_t a = 0; a < labels.size(); ++a) {
    for (size_t b = a + 1; b < labels.size(); ++b)
      EXPECT_FALSE(labels[a].box().overlaps(labels[b].box()))
          << labels[a].text << " at (" << labels[a].x << ", " << labels[a].y << ") overlaps "
          << labels[b].text << " at (" << labels[b].x << ", " << labels[b].y << ")";
    for (const auto& c : circles)
      EXPECT_FALSE(labels[a].box().overlaps(c.box()))
          << labels[a].text << " at (" << labels[a].x << ", " << labels[a].y << ") covers the point at ("
          << c.cx << ", " << c.cy << ")";
  }
}

TEST(Plot, AxisTitlesTicksAndLegendOfTheResultsPlot) {
  const std::string svg = eval::render_svg(results_spec("LAAL_CA (ms)"));
  EXPECT_EQ(svg_strings(svg_texts(svg, "axis-title")), (std::vector<std::string>{"LAAL_CA (ms)", "BLEU"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "title")),
            std::vector<std::string>{"en-fr: BLEU vs computation-aware LAAL"});
  EXPECT_EQ(svg_strings(svg_texts(svg, "legend")),
            (std::vector<std::string>{"group", "interleaved", "group, offline"}));
  // x: 739..3509 ms, widened by 3 % of 2770 on each side: 655.9..3592.1. At most 10 intervals: 250 gives
  // 2..15 (13), 500 gives 1..8 (7); 8 labels of at most 4 digits fit the plot. y: 21.71..41.60 (offline 40.63
  // inside), widened to 21.113..42.197: 2 gives 10..22 (12), 2.5 gives 8..17 (9 ≤ 10).
  std::vector<std::string> ticks = svg_strings(svg_texts(svg, "tick"));
  const std::vector<std::string> x_ticks = {"500", "1000", "1500", "2000", "2500", "3000", "3500", "4000"};
  const std::vector<std::string> y_ticks = {"20.0", "22.5", "25.0", "27.5", "30.0",
                                            "32.5", "35.0", "37.5", "40.0", "42.5"};
  ASSERT_EQ(ticks.size(), x_ticks.size() + y_ticks.size());
  EXPECT_EQ(std::vector<std::string>(ticks.begin(), ticks.begin() + 8), x_ticks);
  EXPECT_EQ(std::vector<std::string>(ticks.begin() + 8, ticks.end()), y_ticks);
  EXPECT_EQ(svg_texts(svg, "point-label").size(), 18u);
  expect_readable(svg);
}

// docs/results.md, table c: LAAL in source words and BLEU, group and interleaved (results/paper-en-fr/).
eval::PlotSpec results_words_spec() {
  eval::PlotSpec spec = results_spec("LAAL (source words)");
  const double group_x[] = {1.88, 2.70, 3.63, 4.56, 5.51, 6.40, 7.25, 8.01, 8.69};
  const double inter_x[] = {1.84, 2.79, 3.63, 4.58, 5.59, 6.50, 7.32, 8.05, 8.76};
  for (int k = 0; k < 9; ++k)
    spec.series[0].points[k].x = group_x[k], spec.series[1].points[k].x = inter_x[k];
  return spec;
}

TEST(Plot, EachLabelIsNearerItsOwnPointThanAnyOther) {
  // The figures of docs/results.md. At k = 1 the two curves' points lie 12 px apart (22.53 and 21.71 BLEU at
  // about the same latency): the first label placed takes its first choice, up and right, only if that does
  // not put it beside the other point, which would read as that point's label.
  for (const eval::PlotSpec& spec : {results_spec("LAAL_CA (ms)"), results_words_spec()}) {
    const std::string svg = eval::render_svg(spec);
    const auto labels = svg_texts(svg, "point-label");
    const auto circles = testing::svg_circles(svg);  // the 18 points, in the labels' order, then the legend's
    ASSERT_EQ(labels.size(), 18u);
    ASSERT_GE(circles.size(), labels.size());
    auto distance = [](const util::SvgBox& b, double x, double y) {
      return std::hypot(x - std::clamp(x, b.x0, b.x1), y - std::clamp(y, b.y0, b.y1));
    };
    for (size_t i = 0; i < labels.size(); ++i) {
      const util::SvgBox b = labels[i].box();
      const double own = distance(b, circles[i].cx, circles[i].cy);
      for (size_t j = 0; j < labels.size(); ++j) {
        if (j == i) continue;
        EXPECT_GE(distance(b, circles[j].cx, circles[j].cy), own)
            << spec.x_label << ": " << (i < 9 ? "group " : "interleaved ") << labels[i].text
            << " is nearer the point at (" << circles[j].cx << ", " << circles[j].cy << ") than its own";
      }
    }
    // No leader line runs through another label: each ends on its own label's box.
    const std::regex leader(
        "<line x1=\"([-0-9.]+)\" y1=\"([-0-9.]+)\" x2=\"([-0-9.]+)\" "
        "y2=\"([-0-9.]+)\"[^>]*stroke-width=\"0.75\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), leader); it != std::sregex_iterator(); ++it) {
      const double x1 = std::stod((*it)[1]), y1 = std::stod((*it)[2]), x2 = std::stod((*it)[3]),
                   y2 = std::stod((*it)[4]);
      for (const auto& l : labels) {
        if (distance(l.box(), x2, y2) < 0.5) continue;  // its own label
        for (int t = 0; t <= 100; ++t) {
          const double x = x1 + (x2 - x1) * t / 100, y = y1 + (y2 - y1) * t / 100;
          EXPECT_GT(distance(l.box(), x, y), 0)
              << spec.x_label << ": the leader line from (" << x1 << ", " << y1 << ") runs through " << l.text
              << " at (" << l.x << ", " << l.y << ")";
          if (distance(l.box(), x, y) == 0) break;
        }
      }
    }
    expect_readable(svg);
  }
}

TEST(Plot, LabelsOfCoincidingCurvesStayApart) {
  // Two curves on top of each other (LAAL in words, BLEU within a point) and a third crossing them: the
  // labels of 27 points in a small range.
  eval::PlotSpec spec{"crowded", "LAAL (source words)", "BLEU", {}};
  for (int s = 0; s < 3; ++s) {
    eval::PlotSeries c{"s" + std::to_string(s), {}, false};
    for (int k = 1; k <= 9; ++k)
      c.points.push_back({k * 0.96 + 0.4 + 0.02 * s, 20 + 2.5 * k + (s == 2 ? 6 - 1.5 * k : 0.3 * s),
                          "k=" + std::to_string(k)});
    spec.series.push_back(c);
  }
  const std::string svg = eval::render_svg(spec);
  EXPECT_EQ(svg_texts(svg, "point-label").size(), 27u);
  expect_readable(svg);
}

TEST(Plot, LongLegendEntriesGrowTheCanvas) {
  eval::PlotSpec spec = results_spec("LAAL (ms)");
  spec.series[1].name = "a model folder with a rather long name, interleaved-blocked";
  const std::string svg = eval::render_svg(spec);
  const util::SvgBox canvas = testing::svg_canvas(svg);
  EXPECT_GT(canvas.x1, 640);
  // The legend box holds every entry.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m,
                                std::regex("<rect x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\" "
                                           "height=\"([0-9.]+)\" fill=\"white\" stroke=\"#ccc\"/>")));
  const util::SvgBox legend{std::stod(m[1]), std::stod(m[2]), std::stod(m[1]) + std::stod(m[3]),
                            std::stod(m[2]) + std::stod(m[4])};
  EXPECT_TRUE(canvas.contains(legend));
  for (const auto& t : svg_texts(svg, "legend")) EXPECT_TRUE(legend.contains(t.box())) << t.text;
  expect_readable(svg);
}

TEST(Plot, LongTitlesAndAxisTitlesGrowTheCanvas) {
  eval::PlotSpec spec = results_spec(std::string(80, 'W'));
  spec.title = std::string(70, 'M');
  spec.y_label = std::string(40, 'W');  // 40 × 0.989 em × 12 px × 1.08 = 513 px: taller than 420
  const std::string svg = eval::render_svg(spec);
  EXPECT_GT(testing::svg_canvas(svg).y1, 513);
  expect_readable(svg);
}

TEST(Plot, OneCurvePerSeriesDashedOfflineLinesAndEscapedText) {
  eval::PlotSpec spec{"a < b",
                      "LAAL",
                      "BLEU",
                      {{"group", {{1, 10, "k=1"}, {2, 20, "k=3"}}, false}, {"offline", {{0, 30, ""}}, true}}};
  const std::string svg = eval::render_svg(spec);
  EXPECT_NE(svg.find("a &lt; b"), std::string::npos);
  EXPECT_EQ(svg.find("a < b"), std::string::npos);
  size_t polylines = 0, dashed = 0;
  for (size_t p = 0; (p = svg.find("<polyline", p)) != std::string::npos; ++p) ++polylines;
  for (size_t p = 0; (p = svg.find("stroke-dasharray", p)) != std::string::npos; ++p) ++dashed;
  EXPECT_EQ(polylines, 1u);
  EXPECT_EQ(dashed, 2u);  // the offline line and its legend swatch
  // Two markers on the curve, one in the legend.
  EXPECT_EQ(testing::svg_circles(svg).size(), 3u);
}

TEST(Plot, NonFinitePointsAreLeftOut) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  eval::PlotSpec spec{
      "t", "LAAL", "WER", {{"group", {{1, 10, "k=1"}, {nan, 5, "k=3"}, {3, 20, "k=5"}}, false}}};
  const std::string svg = eval::render_svg(spec);
  EXPECT_EQ(svg_strings(svg_texts(svg, "point-label")), (std::vector<std::string>{"k=1", "k=5"}));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(PlotAxisTitle, LatencyMetricsCarryTheUnit) {
  using eval::DelayUnit;
  EXPECT_EQ(eval::axis_title("LAAL", DelayUnit::SourceWords), "LAAL (source words)");
  EXPECT_EQ(eval::axis_title("LAAL", DelayUnit::Ms), "LAAL (ms)");
  EXPECT_EQ(eval::axis_title("AL_CA", DelayUnit::Ms), "AL_CA (ms)");
  EXPECT_EQ(eval::axis_title("DAL", DelayUnit::SourceWords), "DAL (source words)");
  EXPECT_EQ(eval::axis_title("StartOffset", DelayUnit::Ms), "StartOffset (ms)");
  EXPECT_EQ(eval::axis_title("AP", DelayUnit::Ms), "AP");  // a proportion
  EXPECT_EQ(eval::axis_title("RTF_CA", DelayUnit::Ms), "RTF_CA");
  EXPECT_EQ(eval::axis_title("NumChunks", DelayUnit::SourceWords), "NumChunks");
  EXPECT_EQ(eval::axis_title("BLEU", DelayUnit::Ms), "BLEU");
  EXPECT_EQ(eval::axis_title("LAAL", std::nullopt), "LAAL");
}

TEST(PlotDelayUnit, FromTheInstanceFormat) {
  // As SimulEval and gpstream eval write them: text (int source_length, words), paced text and speech (float
  // source_length, ms).
  const std::string text =
      R"({"index": 0, "prediction": "a b", "delays": [1, 2], "elapsed": [0, 0], "prediction_length": 2, )"
      R"("reference": "a b", "source": "x y", "source_length": 2})";
  const std::string paced =
      R"({"index": 0, "prediction": "a b", "delays": [400.0, 800.0], "elapsed": [412.5, 801.0], )"
      R"("prediction_length": 2, "reference": "a b", "source": "x y", "source_length": 800.0})";
  const std::string speech =
      R"({"index": 0, "prediction": "a b", "delays": [640.0, 1280.0], "elapsed": [650.1, 1290.2], )"
      R"("prediction_length": 2, "reference": "a b", "source": "utt0.wav", "source_length": 1312.5})";
  testing::TempDir dir;
  testing::write_bytes(dir.file("text.log"), "\n" + text + "\n" + paced + "\n");
  testing::write_bytes(dir.file("paced.log"), paced + "\n");
  testing::write_bytes(dir.file("speech.log"), speech + "\n");
  testing::write_bytes(dir.file("empty.log"), "");
  auto t = eval::read_delay_unit(dir.file("text.log"));  // a blank first line is skipped
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t, eval::DelayUnit::SourceWords);
  auto p = eval::read_delay_unit(dir.file("paced.log"));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, eval::DelayUnit::Ms);
  auto s = eval::read_delay_unit(dir.file("speech.log"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, eval::DelayUnit::Ms);
  EXPECT_FALSE(eval::read_delay_unit(dir.file("empty.log")).ok());
  EXPECT_FALSE(eval::read_delay_unit(dir.file("missing.log")).ok());
}

}  // namespace
}  // namespace gpstream
