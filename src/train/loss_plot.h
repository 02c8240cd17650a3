// Loss curve as a self-contained SVG: training loss per logged step (line) and dev loss (points).
#pragma once

#include <string>
#include <vector>

namespace gpstream::train {

struct LossPoint {
  double step = 0, loss = 0;
};

std::string loss_curve_svg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& dev,
                           const std::string& title);

}  // namespace gpstream::train
