// loss.svg rendered by rsvg-convert (librsvg2-bin; skipped with a message when it is absent): nothing it
// draws leaves the canvas (rendered inside a transparent margin, which must stay empty).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../testing/svg_render.h"
#include "train/loss_plot.h"

namespace gpstream::train {
namespace {

TEST(LossPlotRender, NothingLeavesTheCanvas) {
  if (!gpstream::testing::have_rsvg_convert())
    GTEST_SKIP() << "rsvg-convert not installed (Debian package librsvg2-bin): render checks skipped";
  const std::string dir =
      std::string(GPSTREAM_BINARY_DIR) + "/loss_plot_render_slow_tmp/" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::vector<LossPoint> tr, dv;
  for (int s = 1; s <= 12000; ++s)
    tr.push_back({double(s), 1.2 + 9 * std::exp(-s / 900.0) + 0.2 * std::sin(s * 1.7)});
  for (int s = 1000; s <= 12000; s += 1000) dv.push_back({double(s), 1.3 + 9 * std::exp(-s / 900.0)});
  constexpr int kMargin = 40;
  double w = 0, h = 0;
  const std::string svg = gpstream::testing::padded_svg(
      loss_curve_svg(tr, dv, "gpstream train-speech: a rather long run name to test the title"), kMargin, &w,
      &h);
  std::ofstream(dir + "/loss.svg") << svg;
  ASSERT_EQ(gpstream::testing::rsvg_convert(dir + "/loss.svg", dir + "/loss.png"), 0);
  std::string err;
  const auto img = gpstream::testing::read_png_rgba(dir + "/loss.png", &err);
  ASSERT_TRUE(img.has_value()) << err;
  ASSERT_EQ(img->width, static_cast<int>(w) + 2 * kMargin);
  int outside = 0;
  for (int y = 0; y < img->height; ++y)
    for (int x = 0; x < img->width; ++x) {
      const bool inside = x >= kMargin && x < kMargin + w && y >= kMargin && y < kMargin + h;
      outside += !inside && img->alpha(x, y) != 0 ? 1 : 0;
    }
  EXPECT_EQ(outside, 0) << "pixels drawn off the " << w << " x " << h << " canvas";
}

}  // namespace
}  // namespace gpstream::train
