// Reading scores.tsv files (SimulEval's and gpstream eval's: a header line of metric names and one row of
// values, tab-separated) back into name → value pairs, for plots across runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

Result<std::vector<std::pair<std::string, double>>> read_scores_tsv(const std::string& path);

}  // namespace gpstream::eval
