// SpeechEmbeddingStream: log-mel extraction chained into the streaming speech encoder.
#include "speech_encoder/speech_embedding_stream.h"

#include "util/error.h"

namespace gpstream::speech_encoder {

SpeechEmbeddingStream::SpeechEmbeddingStream(const SpeechEncoderModel& model, int n_threads)
    : encoder_(model, n_threads) {
  GPS_ASSERT(model.config().n_mels == static_cast<int64_t>(audio::kLogMelBins),
             "SpeechEmbeddingStream: the encoder must take 80 log-mel bins");
}

size_t SpeechEmbeddingStream::push(const float* samples, size_t n, std::vector<float>& rows) {
  frames_.clear();
  const size_t n_frames = mel_.push(samples, n, frames_);
  return n_frames == 0 ? 0 : encoder_.push(frames_.data(), n_frames, rows);
}

void SpeechEmbeddingStream::feed(const float* samples, size_t n) {
  frames_.clear();
  const size_t n_frames = mel_.push(samples, n, frames_);
  if (n_frames > 0) encoder_.feed(frames_.data(), n_frames);
}

size_t SpeechEmbeddingStream::finish(std::vector<float>& rows) {
  return encoder_.finish(rows);
}

void SpeechEmbeddingStream::reset() {
  mel_.reset();
  encoder_.reset();
}

}  // namespace gpstream::speech_encoder
