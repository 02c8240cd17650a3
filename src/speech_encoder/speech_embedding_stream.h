// Audio samples in, LLM embedding rows out: LogMelStream (log_mel.h) feeding SpeechEncoderStream
// (speech_encoder_stream.h). 16 kHz mono samples may arrive in any chunk sizes; rows come out per chunk
// of the encoder (chunk_frames x 40 ms of audio). Resampling is the caller's (resample.h).
#pragma once

#include <cstddef>
#include <vector>

#include "audio/log_mel.h"
#include "speech_encoder/speech_encoder_stream.h"

namespace gpstream::speech_encoder {

class SpeechEmbeddingStream {
 public:
  // The model must have n_mels == kLogMelBins (asserted).
  explicit SpeechEmbeddingStream(const SpeechEncoderModel& model, int n_threads = 1);

  // Appends the rows (llm_hidden floats each) these samples complete; returns how many.
  size_t push(const float* samples, size_t n, std::vector<float>& rows);
  // End of the utterance: the partial last chunk (see SpeechEncoderStream::finish).
  size_t finish(std::vector<float>& rows);
  void reset();

  // Two phases (several streams through one encoder pass: SpeechEncoderStream::run_ready_chunks over their
  // encoder()s): feed() runs log-mel and the encoder's front end only; end_input() as the encoder's.
  void feed(const float* samples, size_t n);
  void end_input() { encoder_.end_input(); }
  SpeechEncoderStream& encoder() { return encoder_; }

  size_t samples_pushed() const { return mel_.samples_pushed(); }
  size_t rows_emitted() const { return encoder_.rows_emitted(); }

 private:
  audio::LogMelStream mel_;
  SpeechEncoderStream encoder_;
  std::vector<float> frames_;
};

}  // namespace gpstream::speech_encoder
