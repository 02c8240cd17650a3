// Parsing and writing /v1/stream messages.
#include "serve/stream_protocol.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <tuple>

#include "serve/request_log.h"
#include "util/json_text.h"

namespace gpstream::serve {
namespace {

using nlohmann::json;

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

Error field_error(std::string_view field, std::string_view what, const json& got) {
  // Appended piece by piece: GCC 12 -O3 warns (-Wrestrict, a false positive) on the chained operator+.
  std::string m = "'";
  m.append(field).append("': expected ").append(what).append(", got ").append(type_name(got));
  return invalid_argument(std::move(m));
}

Status check_fields(const json& obj, std::initializer_list<std::string_view> known) {
  for (const auto& [key, _] : obj.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      return invalid_argument("unknown field '" + key + "'");
  return {};
}

Result<std::string> language_code(const json& obj, const char* field) {
  const json& v = obj.at(field);
  if (!v.is_string()) return field_error(field, "a language code string", v);
  const std::string s = v.get<std::string>();
  const bool ok = !s.empty() && s.size() <= 16 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
  if (!ok) return invalid_argument(std::string("'") + field + "': expected a language code such as \"en\"");
  return s;
}

// obj[field]: an integer within [lo, hi].
Result<int> int_field(const json& obj, const char* field, int lo, int hi) {
  const json& v = obj[field];
  if (!v.is_number_integer()) return field_error(field, "an integer", v);
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    return invalid_argument(std::string("'") + field + "': must be between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + ", got " + std::to_string(x));
  return static_cast<int>(x);
}

// "policy": an object naming a known policy, with bounded settings; errors name "policy.<field>".
Result<stream::PolicySpec> policy_field(const json& obj) {
  const json& v = obj["policy"];
  if (!v.is_object()) return field_error("policy", "an object", v);
  for (const auto& [key, _] : v.items())
    if (key != "name" && key != "tau" && key != "min_lag" && key != "max_lag" && key != "frames" &&
        key != "layers" && key != "agreement")
      return invalid_argument("'policy': unknown field '" + key.substr(0, 64) + "'");
  if (!v.contains("name")) return invalid_argument("'policy': no 'name' (" + stream::policy_names() + ")");
  const json& name = v["name"];
  if (!name.is_string()) return field_error("policy.name", "a string", name);
  const std::string n = name.get<std::string>();
  auto kind = stream::parse_policy_name(n);
  if (!kind)
    return invalid_argument("'policy.name': unknown policy '" + n.substr(0, 64) +
                            "' (known: " + stream::policy_names() + ")");
  stream::PolicySpec spec;
  spec.kind = *kind;
  // A setting the policy does not have is an error, as the command line's are.
  if (v.contains("tau") && spec.kind != stream::PolicyKind::Confidence)
    return invalid_argument("'policy.tau': the " + n + " policy has no tau (the confidence policy's)");
  if (spec.kind == stream::PolicyKind::WaitK && (v.contains("min_lag") || v.contains("max_lag")))
    return invalid_argument("'policy': the wait-k policy has no min_lag or max_lag (its lag is 'k')");
  if (v.contains("agreement") && spec.kind != stream::PolicyKind::LocalAgreement)
    return invalid_argument("'policy.agreement': the " + n +
                            " policy has no agreement (the local-agreement policy's)");
  if ((v.contains("frames") || v.contains("layers")) && spec.kind != stream::PolicyKind::AlignAtt)
    return invalid_argument("'policy': the " + n + " policy has no frames or layers (the alignatt policy's)");
  if (v.contains("layers")) {
    const json& l = v["layers"];
    if (!l.is_array() || l.size() > static_cast<size_t>(stream::kMaxPolicyLayers))
      return field_error("policy.layers",
                         "an array of at most " + std::to_string(stream::kMaxPolicyLayers) + " layer numbers",
                         l);
    for (const json& x : l) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= stream::kMaxPolicyLayers)
        return field_error("policy.layers", "an array of layer numbers from 0", l);
      spec.layers.push_back(static_cast<int>(x.get<int64_t>()));
    }
  }
  if (v.contains("tau")) {
    const json& t = v["tau"];
    if (!t.is_number()) return field_error("policy.tau", "a number", t);
    const double d = t.get<double>();
    if (!std::isfinite(d) || d < 0 || d > 1) return invalid_argument("'policy.tau': must be between 0 and 1");
    spec.tau = d;
  }
  constexpr int kLag = stream::kMaxPolicyLag;
  for (auto [field, lo, hi, out] :
       {std::tuple{"min_lag", 0, kLag, &spec.min_lag}, std::tuple{"max_lag", 1, kLag, &spec.max_lag},
        std::tuple{"frames", 1, kLag, &spec.frames},
        std::tuple{"agreement", 2, stream::kMaxPolicyAgreement, &spec.agreement}}) {
    if (!v.contains(field)) continue;
    const std::string path = std::string("policy.") + field;
    const json& x = v[field];
    if (!x.is_number_integer()) return field_error(path, "an integer", x);
    const int64_t i = x.get<int64_t>();
    if (i < lo || i > hi)
      return invalid_argument("'" + path + "': must be between " + std::to_string(lo) + " and " +
                              std::to_string(hi) + ", got " + std::to_string(i));
    *out = static_cast<int>(i);
  }
  if (spec.min_lag > spec.max_lag)
    return invalid_argument("'policy': min_lag (" + std::to_string(spec.min_lag) +
                            ") is greater than max_lag (" + std::to_string(spec.max_lag) + ")");
  if (Status st = stream::validate_policy(spec); !st.ok())  // the layers: none twice
    return invalid_argument("'policy': " + st.error().message());
  return spec;
}

}  // namespace

Result<StreamOptions> parse_stream_options(const json& obj, std::initializer_list<std::string_view> extra) {
  static constexpr std::string_view kOptionFields[] = {
      "k",          "paradigm",         "phi",  "source_lang", "target_lang",
      "continuous", "end_after_source", "beam", "policy"};
  for (const auto& [key, _] : obj.items()) {
    const bool known =
        std::find(std::begin(kOptionFields), std::end(kOptionFields), key) != std::end(kOptionFields) ||
        std::find(extra.begin(), extra.end(), key) != extra.end();
    if (!known) return invalid_argument("unknown field '" + key + "'");
  }
  StreamOptions o;
  if (obj.contains("k")) {
    GPS_ASSIGN(o.k, int_field(obj, "k", 1, 1000000));
  }
  if (obj.contains("paradigm")) {
    const json& v = obj["paradigm"];
    if (!v.is_string()) return field_error("paradigm", "a string", v);
    o.paradigm = stream::parse_paradigm(v.get<std::string>());
    if (!o.paradigm)
      return invalid_argument("'paradigm': unknown '" + v.get<std::string>() +
                              "' (known: " + stream::paradigm_names() + ")");
  }
  if (obj.contains("phi")) {
    const json& v = obj["phi"];
    if (v.is_number()) {
      const double d = v.get<double>();
      if (!std::isfinite(d) || d < 0 || d > 1e6)
        return invalid_argument("'phi': expected a number >= 0 or \"S\"");
      o.phi = stream::Phi{static_cast<float>(d), false};
    } else if (v.is_string()) {
      o.phi = stream::Phi::parse(v.get<std::string>());
      if (!o.phi)
        return invalid_argument("'phi': expected a number >= 0 or \"S\", got '" + v.get<std::string>() + "'");
    } else {
      return field_error("phi", "a number or \"S\"", v);
    }
  }
  if (obj.contains("source_lang")) {
    GPS_ASSIGN(o.source_lang, language_code(obj, "source_lang"));
  }
  if (obj.contains("target_lang")) {
    GPS_ASSIGN(o.target_lang, language_code(obj, "target_lang"));
  }
  if (obj.contains("continuous")) {
    const json& v = obj["continuous"];
    if (!v.is_boolean()) return field_error("continuous", "true or false", v);
    o.continuous = v.get<bool>();
  }
  if (obj.contains("end_after_source")) {
    const json& v = obj["end_after_source"];
    if (!v.is_boolean()) return field_error("end_after_source", "true or false", v);
    o.end_after_source = v.get<bool>();
  }
  if (obj.contains("beam")) {
    GPS_ASSIGN(o.beam, int_field(obj, "beam", 1, 1024));
  }
  if (obj.contains("policy")) {
    GPS_ASSIGN(o.policy, policy_field(obj));
  }
  return o;
}

std::optional<PcmFormat> parse_pcm_format(std::string_view name) {
  if (name == "f32le") return PcmFormat::F32LE;
  if (name == "s16le") return PcmFormat::S16LE;
  return std::nullopt;
}

const char* pcm_format_name(PcmFormat f) {
  return f == PcmFormat::F32LE ? "f32le" : "s16le";
}

Result<std::vector<float>> decode_pcm(std::span<const std::byte> bytes, PcmFormat format) {
  const size_t width = pcm_sample_bytes(format);
  if (bytes.size() % width != 0)
    return invalid_argument("a binary frame of " + std::to_string(bytes.size()) +
                            " bytes is not a whole number of " + pcm_format_name(format) + " samples (" +
                            std::to_string(width) + " bytes each)");
  std::vector<float> samples(bytes.size() / width);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + i * width;
    if (format == PcmFormat::S16LE) {
      const auto s = static_cast<int16_t>(static_cast<uint16_t>(p[0] | (p[1] << 8)));
      samples[i] = static_cast<float>(s) / 32768.0f;
    } else {
      const uint32_t u = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
      float v;
      std::memcpy(&v, &u, sizeof v);
      if (!std::isfinite(v))
        return invalid_argument("sample " + std::to_string(i) + " of a binary frame is not a finite number");
      samples[i] = v;
    }
  }
  return samples;
}

Result<ClientMessage> parse_client_message(std::string_view text) {
  auto parsed = parse_json_bounded(text, "message", kMaxClientJsonDepth);
  if (!parsed) return invalid_argument(parsed.error().message());
  json msg = std::move(*parsed);
  if (!msg.is_object())
    return invalid_argument("message must be a JSON object, got " + std::string(type_name(msg)));
  if (!msg.contains("type")) return invalid_argument("message has no 'type'");
  if (!msg["type"].is_string()) return field_error("type", "a string", msg["type"]);
  const std::string type = msg["type"].get<std::string>();
  if (type == "start") {
    GPS_ASSIGN(StreamOptions o, parse_stream_options(msg, {"type", "audio_format", "sample_rate"}));
    AudioOptions audio;
    if (msg.contains("audio_format")) {
      const json& v = msg["audio_format"];
      if (!v.is_string()) return field_error("audio_format", "\"f32le\" or \"s16le\"", v);
      audio.format = parse_pcm_format(v.get<std::string>());
      if (!audio.format)
        return invalid_argument("'audio_format': expected \"f32le\" or \"s16le\", got '" +
                                v.get<std::string>() + "'");
    }
    if (msg.contains("sample_rate")) {
      const json& v = msg["sample_rate"];
      if (!v.is_number_integer()) return field_error("sample_rate", "an integer", v);
      const int64_t r = v.get<int64_t>();
      if (r < kMinAudioSampleRate || r > kMaxAudioSampleRate)
        return invalid_argument("'sample_rate': must be between " + std::to_string(kMinAudioSampleRate) +
                                " and " + std::to_string(kMaxAudioSampleRate) + " Hz, got " +
                                std::to_string(r));
      audio.sample_rate = static_cast<uint32_t>(r);
    }
    return ClientMessage{StartMessage{std::move(o), audio}};
  }
  if (type == "source") {
    GPS_TRY(check_fields(msg, {"type", "text"}));
    if (!msg.contains("text")) return invalid_argument("source message has no 'text'");
    if (!msg["text"].is_string()) return field_error("text", "a string", msg["text"]);
    return ClientMessage{SourceMessage{msg["text"].get<std::string>()}};
  }
  if (type == "end") {
    GPS_TRY(check_fields(msg, {"type"}));
    return ClientMessage{EndMessage{}};
  }
  return invalid_argument("'type': unknown message type '" + type + "' (expected start, source or end)");
}

std::string reply_text(const nlohmann::ordered_json& j) {
  return json_line(j);
}

nlohmann::ordered_json ms_value(double ms) {
  if (!std::isfinite(ms)) return nullptr;
  // The exact binary value rounded to 3 decimals, read back: the nearest double to that decimal, which
  // nlohmann's shortest round-trip printing writes with those decimals.
  char buf[400];  // the largest double has 309 integer digits
  const auto printed = std::to_chars(buf, buf + sizeof buf, ms, std::chars_format::fixed, 3);
  double rounded = 0;
  std::from_chars(buf, printed.ptr, rounded);
  return rounded == 0 ? 0.0 : rounded;  // no "-0.0"
}

std::string error_event(std::string_view code, std::string_view message) {
  return reply_text({{"type", "error"}, {"code", std::string(code)}, {"message", std::string(message)}});
}

}  // namespace gpstream::serve
