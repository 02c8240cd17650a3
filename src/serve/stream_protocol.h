// The /v1/stream WebSocket protocol (docs/server.md): client messages parsed into typed values with
// every field checked (unknown fields, wrong types and out-of-range values are errors naming the field),
// and server events written as JSON lines. No I/O here; the server reads and writes the frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "stream/paradigm.h"
#include "stream/policy.h"
#include "util/error.h"

namespace gpstream::serve {

// Per-stream choices; unset fields take the server's defaults (the model's gpstream.json unless the
// serve command overrides them).
struct StreamOptions {
  std::optional<int> k;
  std::optional<stream::Paradigm> paradigm;
  std::optional<stream::Phi> phi;
  std::optional<std::string> source_lang, target_lang;
  std::optional<bool> continuous;        // sentence by sentence (bounded memory); default true for streams
  std::optional<bool> end_after_source;  // wait-k: the end marker only once the whole source is read
  std::optional<int> beam;               // word beam search width (1 = token by token; stream/word_beam.h)
  // "policy": {"name": "wait-k" | "confidence" | "local-agreement" | "alignatt", "tau": 0..1, "min_lag": 0..,
  // "max_lag": 1.., "frames": 1.., "layers": [...], "agreement": 2..16}: the read/write
  // policy (stream/policy.h); fields left out keep their defaults (PolicySpec's).
  std::optional<stream::PolicySpec> policy;
};

// Audio streams (a speech model): the PCM encoding of binary frames, mono.
enum class PcmFormat { F32LE, S16LE };

std::optional<PcmFormat> parse_pcm_format(std::string_view name);  // "f32le" or "s16le"
const char* pcm_format_name(PcmFormat f);
inline size_t pcm_sample_bytes(PcmFormat f) {
  return f == PcmFormat::F32LE ? 4 : 2;
}

// Decodes one binary frame. Errors: a byte count that is not whole samples; non-finite float samples.
// int16 sample s maps to s / 32768 (as audio::read_wav does).
Result<std::vector<float>> decode_pcm(std::span<const std::byte> bytes, PcmFormat format);

// Sample rates an audio stream may declare (resampled to 16 kHz).
inline constexpr uint32_t kMinAudioSampleRate = 8000;
inline constexpr uint32_t kMaxAudioSampleRate = 192000;

struct AudioOptions {
  std::optional<PcmFormat> format;      // "audio_format"; default f32le
  std::optional<uint32_t> sample_rate;  // "sample_rate"; default 16000
  bool any() const { return format || sample_rate; }
};

struct StartMessage {
  StreamOptions options;
  AudioOptions audio;
};
struct SourceMessage {
  std::string text;  // any chunk: words, several words or part of a word
};
struct EndMessage {};

using ClientMessage = std::variant<StartMessage, SourceMessage, EndMessage>;

// Deepest JSON nesting accepted in a client's message, request body or SimulEval segment: levels of objects
// and arrays inside the top-level value (parse_json_bounded's count; the protocol's own messages nest 0).
// Deeper documents are refused, not walked.
inline constexpr int kMaxClientJsonDepth = 32;

// Parses one text frame. Errors name the field.
Result<ClientMessage> parse_client_message(std::string_view text);
// Parses the option fields of a JSON object (the start message or a translate request), skipping
// the names in `extra_fields` (checked by the caller). Shared with POST /v1/translate.
Result<StreamOptions> parse_stream_options(const nlohmann::json& object,
                                           std::initializer_list<std::string_view> extra_fields);

// The text of a reply or event the server writes (WebSocket events, HTTP bodies): on one line, without
// spaces, keys in the order built ("type" first); UTF-8 kept as is, control characters escaped, invalid
// UTF-8 replaced, never thrown on.
std::string reply_text(const nlohmann::ordered_json& j);
// Milliseconds as replies give them: rounded to 3 decimals as printf's "%.3f" rounds (correctly), as a
// double, which nlohmann prints with those decimals ("12.5", "3.0"; never "-0.0"); null when not finite.
nlohmann::ordered_json ms_value(double ms);

// An error event: {"type": "error", "code": CODE, "message": MESSAGE}.
std::string error_event(std::string_view code, std::string_view message);

}  // namespace gpstream::serve
