// util/svg.h: nice ticks derived by hand for given ranges, tick formatting, text extents from DejaVu Sans's
// advance widths, escaping.
#include "util/svg.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpstream {
namespace {

struct TicksCase {
  double lo, hi;
  int max_intervals;
  double step, axis_lo, axis_hi;
  int decimals;
  std::vector<std::string> labels;
};

// Each row by hand: the smallest step of {1, 2, 2.5, 5} × 10^n with ceil(hi/step) − floor(lo/step) at most
// max_intervals.
const TicksCase kTicks[] = {
    // LAAL in words, 1.84..8.76: 0.5 gives 3..18 (15 steps), 1 gives 1..9 (8).
    {1.84, 8.76, 8, 1, 1, 9, 0, {"1", "2", "3", "4", "5", "6", "7", "8", "9"}},
    // LAAL in ms, 553..3509: 250 gives 2..15 (13 steps), 500 gives 1..8 (7).
    {553, 3509, 8, 500, 500, 4000, 0, {"500", "1000", "1500", "2000", "2500", "3000", "3500", "4000"}},
    // A loss range, 5.47..6.92: 0.25 gives 21..28 (7 steps > 6), 0.5 gives 10..14 (4).
    {5.47, 6.92, 6, 0.5, 5, 7, 1, {"5.0", "5.5", "6.0", "6.5", "7.0"}},
    // 2.5 is a step too: 0..10 in at most 4 steps.
    {0, 10, 4, 2.5, 0, 10, 1, {"0.0", "2.5", "5.0", "7.5", "10.0"}},
    // BLEU 21.71..41.6: 2.5 gives 8..17 (9 steps > 8), 5 gives 4..9 (5).
    {21.71, 41.6, 8, 5, 20, 45, 0, {"20", "25", "30", "35", "40", "45"}},
    // Optimizer steps 0..1000 in at most 6: 100 gives 10, 200 gives 5.
    {0, 1000, 6, 200, 0, 1000, 0, {"0", "200", "400", "600", "800", "1000"}},
    // A single value 3 widens to 2.7..3.3: 0.1 gives 27..33 (6 > 5), 0.2 gives 13..17 (4).
    {3, 3, 5, 0.2, 2.6, 3.4, 1, {"2.6", "2.8", "3.0", "3.2", "3.4"}},
    // 0 widens to −1..1: 0.25 gives −4..4 (8 > 6), 0.5 gives −2..2 (4).
    {0, 0, 6, 0.5, -1, 1, 1, {"-1.0", "-0.5", "0.0", "0.5", "1.0"}},
    // A range around 0 needs two intervals: max 1 counts as 2, and 0.1 gives −1..1.
    {-0.1, 0.1, 1, 0.1, -0.1, 0.1, 1, {"-0.1", "0.0", "0.1"}},
    // Small values: 0.012..0.047 in at most 5: 0.005 gives 2..10 (8), 0.01 gives 1..5 (4).
    {0.012, 0.047, 5, 0.01, 0.01, 0.05, 2, {"0.01", "0.02", "0.03", "0.04", "0.05"}},
};

TEST(SvgTicks, NiceStepsFromHandDerivedRanges) {
  for (const auto& c : kTicks) {
    SCOPED_TRACE(std::to_string(c.lo) + ".." + std::to_string(c.hi) + " in " +
                 std::to_string(c.max_intervals));
    const util::AxisTicks t = util::nice_ticks(c.lo, c.hi, c.max_intervals);
    EXPECT_DOUBLE_EQ(t.step, c.step);
    EXPECT_NEAR(t.lo, c.axis_lo, 1e-12);
    EXPECT_NEAR(t.hi, c.axis_hi, 1e-12);
    EXPECT_EQ(t.decimals, c.decimals);
    std::vector<std::string> labels;
    for (double v : t.values) labels.push_back(util::format_tick(v, t.decimals));
    EXPECT_EQ(labels, c.labels);
  }
}

TEST(SvgTicks, FormatNeverWritesMinusZero) {
  EXPECT_EQ(util::format_tick(-0.0, 1), "0.0");
  EXPECT_EQ(util::format_tick(-0.04, 1), "0.0");
  EXPECT_EQ(util::format_tick(-0.05001, 1), "-0.1");
  EXPECT_EQ(util::format_tick(2500, 0), "2500");
}

TEST(SvgText, WidthIsDejaVuAdvancesPlusMargin) {
  // k 0.579 + = 0.838 + 3 0.636 = 2.053 em; × 10 px × 1.08.
  EXPECT_NEAR(util::svg_text_width("k=3", 10), 2.053 * 10 * 1.08, 1e-9);
  // W 0.989 em at 12 px.
  EXPECT_NEAR(util::svg_text_width("W", 12), 0.989 * 12 * 1.08, 1e-9);
  // é is two UTF-8 bytes and one code point outside ASCII: 1 em. φ likewise.
  EXPECT_NEAR(util::svg_text_width("\xc3\xa9", 10), 10 * 1.08, 1e-9);
  EXPECT_NEAR(util::svg_text_width("\xcf\x86=0", 10), (1 + 0.838 + 0.636) * 10 * 1.08, 1e-9);
  EXPECT_EQ(util::svg_text_width("", 12), 0);
}

TEST(SvgText, BoxFollowsTheAnchor) {
  // "ab": 0.613 + 0.635 = 1.248 em → 13.4784 px at 10 px; 9.3 px above the baseline, 2.4 below.
  const double w = 1.248 * 10 * 1.08;
  const util::SvgBox s = util::svg_text_box(100, 50, "ab", 10, util::TextAnchor::Start);
  EXPECT_NEAR(s.x0, 100, 1e-9);
  EXPECT_NEAR(s.x1, 100 + w, 1e-9);
  EXPECT_NEAR(s.y0, 50 - 9.3, 1e-9);
  EXPECT_NEAR(s.y1, 50 + 2.4, 1e-9);
  const util::SvgBox m = util::svg_text_box(100, 50, "ab", 10, util::TextAnchor::Middle);
  EXPECT_NEAR(m.x0, 100 - w / 2, 1e-9);
  const util::SvgBox e = util::svg_text_box(100, 50, "ab", 10, util::TextAnchor::End);
  EXPECT_NEAR(e.x1, 100, 1e-9);
  EXPECT_TRUE(s.overlaps(m));
  EXPECT_FALSE(s.overlaps(e));  // they only touch at x = 100
}

TEST(SvgText, Escapes) {
  EXPECT_EQ(util::svg_escape("a < b & \"c\" > d"), "a &lt; b &amp; &quot;c&quot; &gt; d");
  EXPECT_EQ(util::svg_num(-0.01), "0.0");
  EXPECT_EQ(util::svg_num(12.25), "12.2");  // printf rounds half to even on the binary value
}

}  // namespace
}  // namespace gpstream
