// Loss curve as a self-contained SVG: the training loss of every logged step (thin and light), its
// exponential moving average drawn over it (the line to read), and the dev losses (points), with ticks at
// 1, 2, 2.5 or 5 × 10^n and a legend. The training-run harness (train/training_run.h) rewrites
// it at every checkpoint from metrics.jsonl (write_loss_plot), so a running job's progress can be watched.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::train {

struct LossPoint {
  double step = 0, loss = 0;
};

// The moving average's span for n training points: max(1, round(n / 100)), about 1 % of the run, so that it
// lags the raw curve by about half a percent of the plot's width (3 px).
int loss_ema_span(size_t n);
// The exponential moving average with α = 2 / (span + 1) (pandas' ewm(span, adjust=False)):
// s_1 = x_1, s_i = s_{i−1} + α (x_i − s_{i−1}), one point per finite input loss, at its step.
std::vector<LossPoint> loss_ema(const std::vector<LossPoint>& train, int span);

std::string loss_curve_svg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& dev,
                           const std::string& title);

// loss_curve_svg of a metrics.jsonl's losses (read_loss_curve, train/run_folder.h), written atomically.
Status write_loss_plot(const std::string& metrics_path, const std::string& svg_path,
                       const std::string& title);

}  // namespace gpstream::train
