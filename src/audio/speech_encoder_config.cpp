// SpeechEncoderConfig: validation, parameter count and the JSON form stored in safetensors metadata.
#include "audio/speech_encoder_config.h"

#include <nlohmann/json.hpp>

namespace gpstream::audio {

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
  auto in_range = [](const char* name, int64_t v, int64_t lo, int64_t hi) -> Status {
    if (v < lo || v > hi)
      return invalid_argument(std::string("speech encoder config: ") + name + " = " + std::to_string(v) +
                              " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return {};
  };
  GPS_TRY(in_range("n_mels", n_mels, 1, 1024));
  GPS_TRY(in_range("conv_kernel", conv_kernel, 2, 31));
  GPS_TRY(in_range("conv_channels", conv_channels, 1, 8192));
  GPS_TRY(in_range("d_model", d_model, 2, 8192));
  GPS_TRY(in_range("n_layer", n_layer, 0, 128));
  GPS_TRY(in_range("n_head", n_head, 1, 256));
  GPS_TRY(in_range("n_ff", n_ff, 1, 65536));
  GPS_TRY(in_range("conv_module_kernel", conv_module_kernel, 0, 63));
  GPS_TRY(in_range("chunk_frames", chunk_frames, 1, 4096));
  GPS_TRY(in_range("left_chunks", left_chunks, 0, 1 << 20));
  GPS_TRY(in_range("stack", stack, 1, 64));
  GPS_TRY(in_range("proj_hidden", proj_hidden, 1, 65536));
  GPS_TRY(in_range("llm_hidden", llm_hidden, 1, 65536));
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

Result<SpeechEncoderConfig> SpeechEncoderConfig::from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return format_error("speech encoder config: not a JSON object");
  SpeechEncoderConfig c;
  auto get_int = [&](const char* name, int64_t& out) -> Status {
    const auto it = j.find(name);
    if (it == j.end()) return format_error(std::string("speech encoder config: missing \"") + name + "\"");
    if (!it->is_number_integer())
      return format_error(std::string("speech encoder config: \"") + name + "\" is not an integer");
    out = it->get<int64_t>();
    return {};
  };
  auto get_float = [&](const char* name, float& out) -> Status {
    const auto it = j.find(name);
    if (it == j.end()) return format_error(std::string("speech encoder config: missing \"") + name + "\"");
    if (!it->is_number())
      return format_error(std::string("speech encoder config: \"") + name + "\" is not a number");
    const double v = it->get<double>();
    if (!(v >= -1e30 && v <= 1e30))
      return format_error(std::string("speech encoder config: \"") + name + "\" is out of range");
    out = static_cast<float>(v);
    return {};
  };
  GPS_TRY(get_int("n_mels", c.n_mels));
  GPS_TRY(get_float("mel_shift", c.mel_shift));
  GPS_TRY(get_float("mel_scale", c.mel_scale));
  GPS_TRY(get_int("conv_kernel", c.conv_kernel));
  GPS_TRY(get_int("conv_channels", c.conv_channels));
  GPS_TRY(get_int("d_model", c.d_model));
  GPS_TRY(get_int("n_layer", c.n_layer));
  GPS_TRY(get_int("n_head", c.n_head));
  GPS_TRY(get_int("n_ff", c.n_ff));
  // Optional: encoders saved before the convolution module existed have none.
  if (j.contains("conv_module_kernel")) GPS_TRY(get_int("conv_module_kernel", c.conv_module_kernel));
  GPS_TRY(get_int("chunk_frames", c.chunk_frames));
  GPS_TRY(get_int("left_chunks", c.left_chunks));
  GPS_TRY(get_int("stack", c.stack));
  GPS_TRY(get_int("proj_hidden", c.proj_hidden));
  GPS_TRY(get_int("llm_hidden", c.llm_hidden));
  GPS_TRY(get_float("norm_eps", c.norm_eps));
  GPS_TRY(get_float("rope_theta", c.rope_theta));
  GPS_TRY(c.validate());
  return c;
}

}  // namespace gpstream::audio
