// See json_text.h.
#include "util/json_text.h"

namespace gpstream {

Result<nlohmann::json> parse_json_bounded(std::string_view text, const std::string& where, int max_depth) {
  using json = nlohmann::json;
  bool too_deep = false;
  // The callback sees each value's depth as it is parsed; the document is still built (its size is bounded
  // by the text's), and refused afterwards.
  auto depth_check = [&](int depth, json::parse_event_t, json&) {
    too_deep = too_deep || depth > max_depth;
    return true;
  };
  json j;
  try {
    j = json::parse(text, depth_check);
  } catch (const json::exception& e) {
    return format_error(where + ": invalid JSON: " + e.what());
  }
  if (too_deep)
    return format_error(where + ": JSON nested more than " + std::to_string(max_depth) + " levels deep");
  return j;
}

}  // namespace gpstream
