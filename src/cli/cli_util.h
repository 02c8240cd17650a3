// Small helpers shared by the command files: parsing id/position lists and loading models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "util/error.h"

namespace gpstream::cli {

// "1,2,3" → {1,2,3}; errors name the bad item.
Result<std::vector<int32_t>> parse_int_list(const std::string& s, const std::string& what);
Result<std::vector<float>> parse_float_list(const std::string& s, const std::string& what);

// Prints a float the shortest way that reads back exactly.
std::string format_float(float x);

}  // namespace gpstream::cli
