// The /v1/stream WebSocket protocol (docs/server.md): client messages parsed into typed values with
// every field checked (unknown fields, wrong types and out-of-range values are errors naming the field),
// and server events written as JSON lines. No I/O here; the server reads and writes the frames.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "stream/paradigm.h"
#include "util/error.h"

namespace gpstream::serve {

// Per-stream choices; unset fields take the server's defaults (the model's gpstream.json unless the
// serve command overrides them).
struct StreamOptions {
  std::optional<int> k;
  std::optional<stream::Paradigm> paradigm;
  std::optional<stream::Phi> phi;
  std::optional<std::string> source_lang, target_lang;
  std::optional<bool> continuous;  // sentence by sentence (bounded memory); default true for streams
};

struct StartMessage {
  StreamOptions options;
};
struct SourceMessage {
  std::string text;  // any chunk: words, several words or part of a word
};
struct EndMessage {};

using ClientMessage = std::variant<StartMessage, SourceMessage, EndMessage>;

// Parses one text frame. Errors name the field.
Result<ClientMessage> parse_client_message(std::string_view text);
// Parses the option fields of a JSON object (the start message or a translate request), skipping
// the names in `extra_fields` (checked by the caller). Shared with POST /v1/translate.
Result<StreamOptions> parse_stream_options(const nlohmann::json& object,
                                          std::initializer_list<std::string_view> extra_fields);

// A JSON string literal (UTF-8 kept as is; control characters escaped).
std::string json_string(std::string_view s);
// A finite double with up to 3 decimals ("12.5", "0"): times in ms.
std::string json_ms(double ms);

// An error event: {"type": "error", "code": CODE, "message": MESSAGE}.
std::string error_event(std::string_view code, std::string_view message);

}  // namespace gpstream::serve
