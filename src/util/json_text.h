// JSON text read from files and sockets with its nesting bounded: nlohmann's parser builds any depth
// iteratively, but walking or dump()ing a value recurses once per level, so a document nested a few hundred
// thousand levels deep would overflow the stack wherever a value is later printed or copied.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream {

// Parses `text`; refuses invalid JSON and documents nested deeper than `max_depth` levels, naming `where`.
// Levels are counted as nlohmann's parser callback counts them: the top-level value is level 0 and the keys
// and values inside an object or array are one level below it; a document is refused when any key or value
// lies below level `max_depth`. So `max_depth` objects and arrays may enclose a value (the top-level one
// included: with 1, a flat object such as {"a": 1} but not {"a": [1]}), and an empty object or array may
// stand one level further in ({"a": []} passes with 1; a `max_depth` of 0 admits a scalar, {} and []).
Result<nlohmann::json> parse_json_bounded(std::string_view text, const std::string& where, int max_depth);

}  // namespace gpstream
