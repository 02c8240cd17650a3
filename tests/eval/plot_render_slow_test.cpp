// The quality–latency SVG rendered by rsvg-convert (librsvg2-bin; skipped with a message when it is absent):
// the text width estimate the layout relies on bounds the ink rsvg-convert draws, and nothing a plot draws
// leaves its canvas (rendered inside a transparent margin, which must stay empty).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../testing/svg_render.h"
#include "eval/plot.h"
#include "util/svg.h"

namespace gpstream {
namespace {

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/plot_render_slow_tmp/" + std::to_string(getpid());

class PlotRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::have_rsvg_convert())
      GTEST_SKIP() << "rsvg-convert not installed (Debian package librsvg2-bin): render checks skipped";
    std::filesystem::create_directories(kDir);
  }
  // Renders `svg` (written as NAME.svg) and reads the PNG back.
  testing::RgbaImage render(const std::string& name, const std::string& svg) {
    const std::string svg_path = kDir + "/" + name + ".svg", png_path = kDir + "/" + name + ".png";
    std::ofstream(svg_path) << svg;
    EXPECT_EQ(testing::rsvg_convert(svg_path, png_path), 0) << svg_path;
    std::string err;
    auto img = testing::read_png_rgba(png_path, &err);
    EXPECT_TRUE(img.has_value()) << err;
    return img.value_or(testing::RgbaImage{});
  }
  // The plot inside a 40 px transparent margin: every margin pixel stays transparent.
  void expect_on_canvas(const std::string& name, const std::string& svg) {
    constexpr int kMargin = 40;
    double w = 0, h = 0;
    const testing::RgbaImage img = render(name, testing::padded_svg(svg, kMargin, &w, &h));
    ASSERT_EQ(img.width, static_cast<int>(w) + 2 * kMargin);
    ASSERT_EQ(img.height, static_cast<int>(h) + 2 * kMargin);
    int outside = 0, first_x = -1, first_y = -1;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        const bool inside = x >= kMargin && x < kMargin + w && y >= kMargin && y < kMargin + h;
        if (!inside && img.alpha(x, y) != 0 && outside++ == 0) first_x = x - kMargin, first_y = y - kMargin;
      }
    EXPECT_EQ(outside, 0) << name << ": " << outside << " pixels drawn off the " << w << " x " << h
                          << " canvas, the first at (" << first_x << ", " << first_y << ")";
    EXPECT_EQ(img.alpha(kMargin + 1, kMargin + 1), 255) << "the canvas itself is drawn";
  }
};

TEST_F(PlotRender, TextWidthEstimateBoundsTheRenderedInk) {
  const std::vector<std::string> texts = {"k=1 k=9 k=10",
                                          "interleaved-blocked, group",
                                          "LAAL_CA (ms)",
                                          "WWWWMMMM@@%%",
                                          "0123456789.5",
                                          "gpstream train: batch-stream",
                                          "speech-en, group \xcf\x86=0.5 end-after-source",
                                          "fijl rt, ._|"};
  for (double size : {10.0, 12.0, 15.0}) {
    for (const auto& t : texts) {
      const double x0 = 20, base = 50;
      const std::string svg =
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" height=\"80\"><text x=\"" +
          std::to_string(x0) + "\" y=\"" + std::to_string(base) + "\" font-family=\"" + util::kSvgFontFamily +
          "\" font-size=\"" + std::to_string(size) + "\">" + util::svg_escape(t) + "</text></svg>\n";
      const testing::RgbaImage img = render("width", svg);
      ASSERT_GT(img.width, 0);
      int ink_x0 = img.width, ink_x1 = -1, ink_y0 = img.height, ink_y1 = -1;
      for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x)
          if (img.alpha(x, y) != 0)
            ink_x0 = std::min(ink_x0, x), ink_x1 = std::max(ink_x1, x), ink_y0 = std::min(ink_y0, y),
            ink_y1 = std::max(ink_y1, y);
      ASSERT_GE(ink_x1, 0) << "nothing drawn for '" << t << "'";
      const util::SvgBox box = util::svg_text_box(x0, base, t, size, util::TextAnchor::Start);
      // Pixel columns [ink_x0, ink_x1] cover [ink_x0, ink_x1 + 1) in canvas units; one pixel of antialiasing.
      EXPECT_LE(ink_x1 + 1, box.x1 + 1)
          << "'" << t << "' at " << size << " px: ink to " << ink_x1 + 1 << ", estimate to " << box.x1;
      EXPECT_GE(ink_x0, box.x0 - 2) << "'" << t << "' at " << size << " px";
      EXPECT_GE(ink_y0, box.y0 - 1) << "'" << t << "' at " << size << " px";
      EXPECT_LE(ink_y1 + 1, box.y1 + 1) << "'" << t << "' at " << size << " px";
    }
  }
}

TEST_F(PlotRender, NothingLeavesTheCanvas) {
  // A plot like docs/results.md's: two curves of nine points in ms, an offline line.
  eval::PlotSpec spec{
      "en-fr: BLEU vs computation-aware LAAL (ms), group vs interleaved", "LAAL_CA (ms)", "BLEU", {}};
  eval::PlotSeries g{"group", {}, false}, i{"interleaved", {}, false};
  for (int k = 1; k <= 9; ++k) {
    g.points.push_back({400.0 * k + 350, 20 + 2.4 * k - 0.1 * k * k, "k=" + std::to_string(k)});
    i.points.push_back({400.0 * k + 340, 21 + 1.9 * k - 0.1 * k * k, "k=" + std::to_string(k)});
  }
  spec.series = {g, i, {"group, offline", {{0, 40.6, ""}}, true}};
  expect_on_canvas("results", eval::render_svg(spec));
  // Long legend entries, a long title and long axis titles.
  spec.series[0].name = "speech-en-conformer-averaged, interleaved-blocked \xcf\x86=0.5 end-after-source";
  spec.title = std::string(60, 'W');
  spec.x_label = std::string(70, 'M');
  spec.y_label = "WER, lower is better, of every utterance of the dev voices";
  expect_on_canvas("long", eval::render_svg(spec));
  // Wide tick labels.
  eval::PlotSpec wide{
      "t", "AL (ms)", "BLEU", {{"a", {{1234567, 0.001, "k=1"}, {9876543, 0.002, "k=2"}}, false}}};
  expect_on_canvas("wide", eval::render_svg(wide));
}

}  // namespace
}  // namespace gpstream
