// Loading a speech model directory.
#include "speech/speech_model.h"

#include <filesystem>

namespace gpstream::speech {

bool is_speech_model_dir(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(std::filesystem::path(dir) / kSpeechEncoderFile, ec);
}

Result<SpeechModel> SpeechModel::load(const std::string& dir, int n_threads) {
  const std::string enc_path = (std::filesystem::path(dir) / kSpeechEncoderFile).string();
  if (!is_speech_model_dir(dir))
    return not_found(dir + ": not a speech model (no " + std::string(kSpeechEncoderFile) + ")");
  SpeechModel m;
  GPS_ASSIGN(m.llm, stream::StreamingModel::load(dir, n_threads));
  GPS_ASSIGN(speech_encoder::SpeechEncoderModel enc, speech_encoder::SpeechEncoderModel::load(enc_path));
  if (enc.config().llm_hidden != m.llm.model->config().n_embd)
    return format_error(enc_path + ": the encoder writes rows of " + std::to_string(enc.config().llm_hidden) +
                        " floats but the LLM's embeddings have " +
                        std::to_string(m.llm.model->config().n_embd));
  m.encoder = std::make_unique<speech_encoder::SpeechEncoderModel>(std::move(enc));
  return m;
}

double SpeechModel::chunk_ms() const {
  return 10.0 * static_cast<double>(encoder->config().mel_frames_per_chunk());
}

}  // namespace gpstream::speech
