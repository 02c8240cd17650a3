// Reference-stream checks shared by BLEU and chrF; see reference_streams.h.
#include "eval/reference_streams.h"

#include <set>

namespace gpstream::eval {

Result<int> check_reference_streams(std::string_view metric, size_t n_hyps,
                                    const std::vector<std::vector<std::string>>& ref_streams) {
  const std::string name(metric);
  if (ref_streams.empty()) return invalid_argument(name + ": no reference stream given");
  for (size_t k = 0; k < ref_streams.size(); ++k) {
    if (ref_streams[k].size() != n_hyps) {
      return invalid_argument(name + ": the hypotheses have " + std::to_string(n_hyps) +
                              " lines but reference " + std::to_string(k + 1) + " has " +
                              std::to_string(ref_streams[k].size()));
    }
  }
  std::set<size_t> counts;
  for (size_t i = 0; i < n_hyps; ++i) {
    size_t present = 0;
    for (const auto& stream : ref_streams) present += !stream[i].empty();
    if (present == 0) {
      return invalid_argument(name + ": empty reference for segment " + std::to_string(i + 1) +
                              " (sacreBLEU: \"Empty or `None` reference sentence found.\")");
    }
    counts.insert(present);
  }
  if (counts.size() > 1) return -1;
  return static_cast<int>(counts.empty() ? ref_streams.size() : *counts.begin());
}

}  // namespace gpstream::eval
