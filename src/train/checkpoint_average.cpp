// Checkpoint averaging.
#include "train/checkpoint_average.h"

namespace gpstream::train {

Result<CheckpointState> average_checkpoints(const std::vector<std::string>& paths) {
  if (paths.empty()) return invalid_argument("no checkpoints to average");
  CheckpointState newest;
  std::vector<double> sum;
  for (size_t i = 0; i < paths.size(); ++i) {
    GPS_ASSIGN(CheckpointState s, read_checkpoint(paths[i]));
    if (i == 0) {
      sum.assign(s.values.size(), 0.0);
    } else if (s.fingerprint != newest.fingerprint || s.values.size() != sum.size()) {
      return invalid_argument("checkpoint " + paths[i] + " holds other parameters than " + paths[0] + " (" +
                              std::to_string(s.values.size()) + " values of '" + s.fingerprint +
                              "' against " + std::to_string(sum.size()) + " of '" + newest.fingerprint +
                              "')");
    }
    for (size_t j = 0; j < sum.size(); ++j) sum[j] += s.values[j];
    if (i == 0 || s.step > newest.step) newest = std::move(s);
  }
  const double n = static_cast<double>(paths.size());
  for (size_t j = 0; j < sum.size(); ++j) newest.values[j] = static_cast<float>(sum[j] / n);
  return newest;
}

}  // namespace gpstream::train
