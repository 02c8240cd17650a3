// Prometheus exposition: cumulative buckets, sum and count; quantiles interpolated within a bucket.
#include "serve/metrics.h"

#include <gtest/gtest.h>

#include "../testing/fp_bounds.h"

namespace gpstream::serve {
namespace {

TEST(Metrics, HistogramIsCumulative) {
  Histogram h;
  for (double s : {0.001, 0.004, 0.02, 0.02, 0.3, 100.0}) h.observe(s);
  const std::string r = h.render("lag");
  EXPECT_NE(r.find("lag_bucket{le=\"0.005\"} 2\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_bucket{le=\"0.025\"} 4\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_bucket{le=\"0.5\"} 5\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_bucket{le=\"30\"} 5\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_bucket{le=\"+Inf\"} 6\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_count 6\n"), std::string::npos) << r;
  EXPECT_NE(r.find("lag_sum 100.345"), std::string::npos) << r;
}

TEST(Metrics, QuantileInterpolatesInItsBucket) {
  Histogram h;
  EXPECT_EQ(h.quantile(0.5), 0.0);
  // 4 observations in (0.01, 0.025]: the median (rank 2 of 4) lies halfway through that bucket.
  for (int i = 0; i < 4; ++i) h.observe(0.02);
  // lo + (hi − lo)·(rank − before)/n in double over the bucket bounds 0.01 and 0.025 (decimal literals, u
  // each): the subtraction, the product and the sum round once each, and the expected literal is off by u
  // too; every term is ≤ 0.025: ≤ 6u·0.025 (u = 2^-53).
  const double tol = 6 * gpstream::testing::kUnitF64 * 0.025;
  EXPECT_NEAR(h.quantile(0.5), 0.0175, tol);
  EXPECT_NEAR(h.quantile(1.0), 0.025, tol);
}

TEST(Metrics, RenderHasTypesAndHelp) {
  Metrics m;
  m.sessions_active = 3;
  m.word_lag.observe(0.2);
  const std::string r = m.render();
  EXPECT_NE(r.find("# TYPE gpstream_sessions_active gauge\ngpstream_sessions_active 3\n"), std::string::npos);
  EXPECT_NE(r.find("# TYPE gpstream_word_lag_seconds histogram\n"), std::string::npos);
  EXPECT_NE(r.find("gpstream_word_lag_seconds_count 1\n"), std::string::npos);
  EXPECT_NE(r.find("# TYPE gpstream_tokens_per_second gauge"), std::string::npos);
  EXPECT_NE(r.find("# TYPE gpstream_queue_depth gauge"), std::string::npos);
}

}  // namespace
}  // namespace gpstream::serve
