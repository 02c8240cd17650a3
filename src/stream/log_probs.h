// Log-probabilities of a logits row, in double: what the word beam, the confidence policy and the
// sentence-end detector read from the model.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gpstream::stream {

// log Σ_i exp(row[i]), shifted by the row's maximum so that no term overflows (logits in float, or
// log-probabilities in double).
template <typename T>
double log_sum_exp(std::span<const T> row) {
  double mx = -std::numeric_limits<double>::infinity();
  for (T v : row) mx = std::max(mx, static_cast<double>(v));
  double sum = 0;
  for (T v : row) sum += std::exp(static_cast<double>(v) - mx);
  return mx + std::log(sum);
}

// log softmax(row)[id].
inline double log_prob(std::span<const float> row, int32_t id) {
  return static_cast<double>(row[static_cast<size_t>(id)]) - log_sum_exp(row);
}

// out[i] = log softmax(row)[i].
inline void log_softmax(std::span<const float> row, std::vector<double>& out) {
  const double lse = log_sum_exp(row);
  out.resize(row.size());
  for (size_t i = 0; i < row.size(); ++i) out[i] = static_cast<double>(row[i]) - lse;
}

}  // namespace gpstream::stream
