// JSON text read from files and sockets with its nesting bounded: nlohmann's parser builds any depth
// iteratively, but walking or dump()ing a value recurses once per level, so a document nested a few hundred
// thousand levels deep would overflow the stack wherever a value is later printed or copied.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream {

// Parses `text`; refuses invalid JSON and documents nested deeper than `max_depth` levels (an object or
// array is one level), naming `where`.
Result<nlohmann::json> parse_json_bounded(std::string_view text, const std::string& where, int max_depth);

}  // namespace gpstream
