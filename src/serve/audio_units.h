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

  // push() in two phases, so that many streams' encoder chunks run as one stacked pass (serve's engine):
  // feed() resamples and runs the encoder's front end; encode_ready() runs the ready chunks of all the given
  // streams through the encoder's Transformer together (speech_encoder::SpeechEncoderStream::
  // run_ready_chunks); take_units() then cuts at most max_units of the completed units. push() is the three
  // on one stream. Units not taken stay for the next take_units(), push() or finish().
  void feed(std::span<const float> samples);
  // Encoder chunks ready for the Transformer (complete chunks since the last encode).
  int64_t chunks_ready() { return embeddings_.encoder().chunks_ready(); }
  static void encode_ready(std::span<AudioUnits* const> streams);
  void take_units(std::vector<AudioUnit>& out, size_t max_units);

  // Audio per full chunk and per row, in ms.
  double chunk_ms() const;
  double row_ms() const;
  // The rate of the samples push() takes.
  uint32_t sample_rate() const { return sample_rate_; }

 private:
  AudioUnits(const speech_encoder::SpeechEncoderModel& model, audio::ResampleStream resampler,
             uint32_t sample_rate);
  void cut(std::vector<AudioUnit>& out, bool last, size_t max_units = SIZE_MAX);

  const speech_encoder::SpeechEncoderModel* model_;
  uint32_t sample_rate_ = 0;
  audio::ResampleStream resampler_;
  speech_encoder::SpeechEmbeddingStream embeddings_;
  std::vector<float> samples_16k_, rows_;
};

}  // namespace gpstream::serve
