// Fuzz target: a speech encoder file (speech_encoder::SpeechEncoderModel::load: safetensors header, the
// config JSON in its metadata, tensor names, shapes, dtypes, finiteness). A file that loads is then run: a
// few chunks of made-up log-mel frames through SpeechEncoderStream, whose row count must match the
// whole-utterance formula (output_rows). Frames are capped so that huge chunk sizes stay fast.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "fuzz_input.h"
#include "speech_encoder/speech_encoder_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace speech_encoder = gpstream::speech_encoder;
  auto model = speech_encoder::SpeechEncoderModel::load(
      gpstream::fuzz::as_file(data, size, ".speech_encoder.safetensors"));
  if (!model.ok()) return 0;
  const speech_encoder::SpeechEncoderConfig& c = model->config();
  if (!c.validate().ok()) std::abort();  // load promises a valid config
  if (static_cast<int64_t>(model->size()) != c.parameter_count()) std::abort();
  for (float v : model->values())
    if (!std::isfinite(v)) std::abort();  // and finite weights
  const int64_t n_frames = std::min<int64_t>(2 * c.mel_frames_per_chunk() + 3, 96);
  std::vector<float> mel(static_cast<size_t>(n_frames * c.n_mels));
  for (size_t i = 0; i < mel.size(); ++i) mel[i] = -7.0f + 4.0f * std::sin(0.37f * static_cast<float>(i));
  speech_encoder::SpeechEncoderStream stream(*model);
  std::vector<float> rows;
  size_t n_rows = 0;
  for (int64_t f = 0; f < n_frames; f += 5) {
    const int64_t n = std::min<int64_t>(5, n_frames - f);
    n_rows += stream.push(mel.data() + f * c.n_mels, static_cast<size_t>(n), rows);
  }
  n_rows += stream.finish(rows);
  if (static_cast<int64_t>(n_rows) != c.output_rows(n_frames)) std::abort();
  if (rows.size() != n_rows * static_cast<size_t>(c.llm_hidden)) std::abort();
  return 0;
}
