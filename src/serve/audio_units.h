// One audio stream's input on the server: samples of binary WebSocket frames (decoded by stream_protocol.h),
// resampled to 16 kHz when the stream's rate differs (audio::ResampleStream, exact across frames), turned
// into encoder rows (speech_encoder::SpeechEmbeddingStream), and cut into source units: one unit per encoder
// chunk (rows_per_chunk rows, chunk_ms of audio), the last one possibly shorter (its rows × the ms per row).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "audio/resample_stream.h"
#include "speech_encoder/speech_embedding_stream.h"
#include "util/error.h"

namespace gpstream::serve {

// A source unit: the rows of one encoder chunk (llm_hidden floats each) and the audio they cover.
struct AudioUnit {
  std::vector<float> rows;
  int n_rows = 0;
  double duration_ms = 0;
};

class AudioUnits {
 public:
  // The model must outlive this object; sample_rate as for audio::resample (checked by create).
  static Result<AudioUnits> create(const speech_encoder::SpeechEncoderModel& model, uint32_t sample_rate);

  // Samples at the stream's rate → the units they complete, appended to `out`.
  void push(std::span<const float> samples, std::vector<AudioUnit>& out);
  // End of the audio: the partial last chunk, if it has rows.
  void finish(std::vector<AudioUnit>& out);

  // Audio per full chunk and per row, in ms.
  double chunk_ms() const;
  double row_ms() const;
  // The rate of the samples push() takes.
  uint32_t sample_rate() const { return sample_rate_; }

 private:
  AudioUnits(const speech_encoder::SpeechEncoderModel& model, audio::ResampleStream resampler,
             uint32_t sample_rate);
  void cut(std::vector<AudioUnit>& out, bool last);

  const speech_encoder::SpeechEncoderModel* model_;
  uint32_t sample_rate_ = 0;
  audio::ResampleStream resampler_;
  speech_encoder::SpeechEmbeddingStream embeddings_;
  std::vector<float> samples_16k_, rows_;
};

}  // namespace gpstream::serve
