// The HTTP status of each error code the server writes in {"type": "error", "code": ...} replies and
// events, so that every endpoint answers the same mistake with the same status (docs/server.md's table).
#pragma once

#include <string_view>

namespace gpstream::serve {

// 400 malformed request, 401 missing or wrong API key, 403 foreign origin, 404, 405, 413 body too large,
// 421 wrong Host, 422 input the model cannot take (a sentence or word too long), 429 a client over its
// quota, 503 the server busy, draining or shutting down; 500 for engine errors and unknown codes.
int http_status_for_error(std::string_view code);

}  // namespace gpstream::serve
