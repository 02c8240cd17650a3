// See error_status.h.
#include "serve/error_status.h"

namespace gpstream::serve {

int http_status_for_error(std::string_view code) {
  struct Entry {
    std::string_view code;
    int status;
  };
  static constexpr Entry kStatuses[] = {
      {"bad_request", 400},
      {"bad_message", 400},
      {"bad_options", 400},
      {"bad_segment", 400},
      {"bad_source", 400},
      {"protocol", 400},
      {"unauthorized", 401},
      {"forbidden_origin", 403},
      {"not_found", 404},
      {"method_not_allowed", 405},
      {"too_large", 413},
      {"bad_host", 421},
      {"sentence_too_long", 422},
      {"word_too_long", 422},
      {"backlog_full", 422},
      {"audio_too_long", 422},
      {"quota", 429},
      {"busy", 503},
      {"draining", 503},
      {"shutdown", 503},
      {"over_capacity", 503},
  };
  for (const Entry& e : kStatuses)
    if (e.code == code) return e.status;
  return 500;
}

}  // namespace gpstream::serve
