// SpeechEncoderConfig: validation, parameter count and the JSON form stored in safetensors metadata.
#include "speech_encoder/speech_encoder_config.h"

#include <iterator>
#include <nlohmann/json.hpp>

#include "util/json_reader.h"

namespace gpstream::speech_encoder {
namespace {

// The integer fields with their bounds (a config read from a file is untrusted): one table for reading
// and validate().
struct IntField {
  const char* name;
  int64_t SpeechEncoderConfig::*field;
  int64_t lo, hi;
};
constexpr IntField kIntFields[] = {
    {"n_mels", &SpeechEncoderConfig::n_mels, 1, 1024},
    {"conv_kernel", &SpeechEncoderConfig::conv_kernel, 2, 31},
    {"conv_channels", &SpeechEncoderConfig::conv_channels, 1, 8192},
    {"d_model", &SpeechEncoderConfig::d_model, 2, 8192},
    {"n_layer", &SpeechEncoderConfig::n_layer, 0, 128},
    {"n_head", &SpeechEncoderConfig::n_head, 1, 256},
    {"n_ff", &SpeechEncoderConfig::n_ff, 1, 65536},
    {"conv_module_kernel", &SpeechEncoderConfig::conv_module_kernel, 0, 63},
    {"chunk_frames", &SpeechEncoderConfig::chunk_frames, 1, 4096},
    {"left_chunks", &SpeechEncoderConfig::left_chunks, 0, 1 << 20},
    {"stack", &SpeechEncoderConfig::stack, 1, 64},
    {"proj_hidden", &SpeechEncoderConfig::proj_hidden, 1, 65536},
    {"llm_hidden", &SpeechEncoderConfig::llm_hidden, 1, 65536},
};
// Float fields are read within these bounds; validate() checks the tighter ones.
constexpr const char* kFloatFields[] = {"mel_shift", "mel_scale", "norm_eps", "rope_theta"};
constexpr double kFloatBound = 1e30;

}  // namespace

int64_t SpeechEncoderConfig::output_rows(int64_t n_mel_frames) const {
  if (n_mel_frames <= 0) return 0;
  return n_mel_frames / 2 / 2 / stack;
}

int64_t SpeechEncoderConfig::parameter_count() const {
  const int64_t K = conv_kernel, C = conv_channels, D = d_model, F = n_ff;
  int64_t n = C * K * n_mels + C + D * K * C + D;
  n += n_layer * (2 * D + 4 * D * D + 3 * D * F);
  if (conv_module_kernel > 0) n += n_layer * (D + 2 * D * D + D * conv_module_kernel + D * D);
  n += D;
  n += proj_hidden * stack * D + proj_hidden + llm_hidden * proj_hidden + llm_hidden;
  return n;
}

Status SpeechEncoderConfig::validate() const {
  for (const IntField& f : kIntFields) {
    const int64_t v = this->*f.field;
    if (v < f.lo || v > f.hi)
      return invalid_argument(std::string("speech encoder config: ") + f.name + " = " + std::to_string(v) +
                              " is outside [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) + "]");
  }
  if (d_model % n_head != 0 || head_dim() % 2 != 0)
    return invalid_argument("speech encoder config: d_model " + std::to_string(d_model) +
                            " must be n_head × an even head_dim (n_head = " + std::to_string(n_head) + ")");
  if (chunk_frames % stack != 0)
    return invalid_argument("speech encoder config: chunk_frames " + std::to_string(chunk_frames) +
                            " must be a multiple of stack " + std::to_string(stack));
  if (!(mel_shift >= -1e6f && mel_shift <= 1e6f))
    return invalid_argument("speech encoder config: mel_shift must be in [-1e6, 1e6]");
  if (!(mel_scale > 0.0f && mel_scale <= 1e6f))
    return invalid_argument("speech encoder config: mel_scale must be in (0, 1e6]");
  if (!(norm_eps > 0.0f && norm_eps < 1.0f))
    return invalid_argument("speech encoder config: norm_eps must be in (0, 1)");
  if (!(rope_theta >= 1.0f && rope_theta <= 1e9f))
    return invalid_argument("speech encoder config: rope_theta must be in [1, 1e9]");
  return {};
}

std::string SpeechEncoderConfig::to_json() const {
  nlohmann::json j;
  j["n_mels"] = n_mels;
  j["mel_shift"] = mel_shift;
  j["mel_scale"] = mel_scale;
  j["conv_kernel"] = conv_kernel;
  j["conv_channels"] = conv_channels;
  j["d_model"] = d_model;
  j["n_layer"] = n_layer;
  j["n_head"] = n_head;
  j["n_ff"] = n_ff;
  // Written only when present, so an encoder without the module has the JSON it always had (checkpoint
  // fingerprints of runs started before the module existed still match).
  if (conv_module_kernel > 0) j["conv_module_kernel"] = conv_module_kernel;
  j["chunk_frames"] = chunk_frames;
  j["left_chunks"] = left_chunks;
  j["stack"] = stack;
  j["proj_hidden"] = proj_hidden;
  j["llm_hidden"] = llm_hidden;
  j["norm_eps"] = norm_eps;
  j["rope_theta"] = rope_theta;
  return j.dump();
}

Status SpeechEncoderConfig::read_fields(JsonReader& r, bool all_required) {
  // One field within [lo, hi], required or optional.
  const auto read = [&r](bool required, const char* name, auto& out, auto lo, auto hi) {
    return required ? r.required(name, out, lo, hi) : r.optional(name, out, lo, hi);
  };
  // conv_module_kernel is optional even in a full config: encoders saved before the convolution module
  // existed have none.
  for (const IntField& f : kIntFields)
    GPS_TRY(read(all_required && f.field != &SpeechEncoderConfig::conv_module_kernel, f.name, this->*f.field,
                 f.lo, f.hi));
  float* const floats[] = {&mel_shift, &mel_scale, &norm_eps, &rope_theta};
  for (size_t i = 0; i < std::size(kFloatFields); ++i)
    GPS_TRY(read(all_required, kFloatFields[i], *floats[i], -kFloatBound, kFloatBound));
  return {};
}

Result<SpeechEncoderConfig> SpeechEncoderConfig::from_json(const std::string& text,
                                                           const std::string& where) {
  // A flat object: one level.
  GPS_ASSIGN(nlohmann::json j, parse_json_object(text, where, 1));
  GPS_ASSIGN(JsonReader r, JsonReader::open(j, where, "", UnknownKeys::Refuse));
  SpeechEncoderConfig c;
  GPS_TRY(c.read_fields(r, /*all_required=*/true));
  GPS_TRY(r.finish());
  GPS_TRY(c.validate());  // its errors name the speech encoder config
  return c;
}

}  // namespace gpstream::speech_encoder
