// The checks sacreBLEU makes on a corpus's reference streams before scoring (BLEU and chrF alike): every
// stream has one line per hypothesis, and every segment has at least one non-empty reference.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

// Checks ref_streams against n_hyps hypotheses; errors name the metric ("BLEU", "chrF") and the segment
// (1-based). Returns the number of references per segment for the signature: the count of non-empty ones
// when every segment has the same count, else -1 ("variable").
Result<int> check_reference_streams(std::string_view metric, size_t n_hyps,
                                    const std::vector<std::vector<std::string>>& ref_streams);

}  // namespace gpstream::eval
