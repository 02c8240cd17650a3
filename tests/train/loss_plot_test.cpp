// train/loss_plot.h: the moving average derived by hand, nice ticks and the legend read back from the SVG,
// and loss.svg rewritten at a checkpoint of a running job (before training ends).
#include "train/loss_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "../testing/svg_elements.h"
#include "train/trainer.h"
#include "trainer_test_util.h"

namespace gpstream::train {
namespace {

using gpstream::testing::svg_strings;
using gpstream::testing::svg_texts;

std::vector<std::string> polylines(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex re("<polyline[^>]* points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

size_t n_points(const std::string& points) {
  size_t n = 0;
  for (char c : points) n += c == ',' ? 1 : 0;
  return n;
}

TEST(LossPlot, SpanIsAboutOnePercentOfTheRun) {
  EXPECT_EQ(loss_ema_span(0), 1);
  EXPECT_EQ(loss_ema_span(149), 1);  // round(1.49)
  EXPECT_EQ(loss_ema_span(151), 2);  // round(1.51)
  EXPECT_EQ(loss_ema_span(400), 4);
  EXPECT_EQ(loss_ema_span(12000), 120);
}

TEST(LossPlot, MovingAverageByHand) {
  // span 3: α = 2/4 = 0.5. s1 = 4; s2 = 4 + 0.5 (2 − 4) = 3; s3 = 3 + 0.5 (3 − 3) = 3; NaN left out;
  // s5 = 3 + 0.5 (1 − 3) = 2.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto e = loss_ema({{1, 4}, {2, 2}, {3, 3}, {4, nan}, {5, 1}}, 3);
  ASSERT_EQ(e.size(), 4u);
  const double want_step[] = {1, 2, 3, 5}, want_loss[] = {4, 3, 3, 2};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(e[i].step, want_step[i]);
    EXPECT_DOUBLE_EQ(e[i].loss, want_loss[i]);
  }
  // span 1: α = 1, the raw losses.
  const auto raw = loss_ema({{1, 4}, {2, 2}}, 1);
  EXPECT_DOUBLE_EQ(raw[1].loss, 2);
}

TEST(LossPlot, NiceTicksLegendAndBothCurves) {
  // 400 steps from 6.92 down to 5.47, dev losses at 200 and 400 inside that range.
  std::vector<LossPoint> train, dev = {{200, 6.1}, {400, 5.6}};
  for (int s = 1; s <= 400; ++s) train.push_back({double(s), 6.92 - (6.92 - 5.47) * (s - 1) / 399.0});
  const std::string svg = loss_curve_svg(train, dev, "gpstream train: group");
  // y: 5.47..6.92 widened by 3 % of 1.45 on each side, 5.4265..6.9635, in at most 10 steps: 0.1 gives 54..70
  // (16), 0.2 gives 27..35 (8), 37.5 px apart. x: 0..400 in at most 10: 25 gives 16, 50 gives 8, 70 px apart.
  std::vector<std::string> want;
  for (int s = 0; s <= 400; s += 50) want.push_back(std::to_string(s));
  for (const char* v : {"5.4", "5.6", "5.8", "6.0", "6.2", "6.4", "6.6", "6.8", "7.0"}) want.push_back(v);
  EXPECT_EQ(svg_strings(svg_texts(svg, "tick")), want);
  EXPECT_EQ(svg_strings(svg_texts(svg, "legend")),
            (std::vector<std::string>{"train loss (each step)", "train loss, moving average (span 4)",
                                      "dev loss"}));
  EXPECT_EQ(svg_strings(svg_texts(svg, "axis-title")),
            (std::vector<std::string>{"optimizer step", "loss (nats/token)"}));
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 2u);  // raw, then the moving average over it
  EXPECT_EQ(n_points(lines[0]), 400u);
  EXPECT_EQ(n_points(lines[1]), 400u);
  EXPECT_NE(lines[0], lines[1]);
  EXPECT_EQ(gpstream::testing::svg_circles(svg).size(), 3u);  // two dev points, one legend marker
  const util::SvgBox canvas = gpstream::testing::svg_canvas(svg);
  for (const auto& t : svg_texts(svg)) EXPECT_TRUE(canvas.contains(t.box())) << t.text;
}

TEST(LossPlot, WrittenFromMetricsJsonl) {
  const std::string dir = gpstream::testing::tmp_dir("loss_plot_jsonl");
  std::ofstream(dir + "/metrics.jsonl") << R"({"step": 1, "loss": 3.0})"
                                        << "\n"
                                        << R"({"step": 2, "loss": 2.0, "dev_loss": 2.5})"
                                        << "\n"
                                        << R"({"step": 3, "lo)";  // torn by a kill
  ASSERT_TRUE(write_loss_plot(dir + "/metrics.jsonl", dir + "/loss.svg", "t").ok());
  std::ifstream in(dir + "/loss.svg");
  const std::string svg((std::istreambuf_iterator<char>(in)), {});
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(n_points(lines[0]), 2u);
  EXPECT_EQ(gpstream::testing::svg_circles(svg).size(), 2u);
}

TEST(LossPlot, RewrittenAtEveryCheckpoint) {
  const std::string dir = gpstream::testing::tmp_dir("loss_plot_ckpt");
  const std::string tr = gpstream::testing::corpus_tsv(dir, "train", 100);
  const std::string dv = gpstream::testing::corpus_tsv(dir, "dev", 10);
  const std::string extra = R"(, "checkpoint": {"every_steps": 2, "every_minutes": 0, "keep": 2})";
  // Stopped after step 5 as if killed: the last checkpoint (step 4) is the last loss.svg, with 4 steps.
  TrainRunOptions stop;
  stop.stop_after_steps = 5;
  auto r = run_training(
      gpstream::testing::parse(gpstream::testing::base_config(dir + "/run", tr, dv, 8, extra)), stop);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::ifstream in(dir + "/run/loss.svg");
  ASSERT_TRUE(in) << "no loss.svg before training ended";
  const std::string svg((std::istreambuf_iterator<char>(in)), {});
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(n_points(lines[0]), 4u);
}

}  // namespace
}  // namespace gpstream::train
