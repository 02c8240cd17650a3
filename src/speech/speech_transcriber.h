// One streaming speech recognition: 16 kHz samples arrive in any chunk sizes, go through the log-mel front
// end and the streaming encoder (speech_encoder::SpeechEmbeddingStream), and every completed encoder chunk
// enters the LLM's Session as one source unit (chunk wait-k counts them); the Session is stepped until it
// needs the next chunk, and the target words it writes come out with SimulEval's speech timing
// (eval/speech_clock.h):
//   delay   = ms of audio consumed when the word was written, with the audio read one encoder chunk at a time
//             (SimulEval --source-segment-size = the chunk duration): j chunks read → j × chunk_ms, and the
//             whole audio once every chunk was read after the end of the audio;
//   elapsed = delay + ms of computation (time spent inside push()/finish()) since the utterance's first push.
// Words and delays depend only on the samples, not on how they were split into push() calls.
// docs/speech.md, "Streaming transcription".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "speech/speech_model.h"
#include "speech_encoder/speech_embedding_stream.h"
#include "stream/session.h"

namespace gpstream::speech {

// A target word with its SimulEval speech timing.
struct TranscribedWord {
  std::string text;
  int chunks = 0;         // encoder chunks read when it was written (stream::Event::delay)
  double delay_ms = 0;    // audio consumed, ms
  double elapsed_ms = 0;  // delay_ms + computation ms since the first push
};

class SpeechTranscriber {
 public:
  // `options` are the Session's (policy, paradigm, φ, decoding; typically model.llm.default_options() with
  // the caller's overrides). Continuous sessions are refused: one transcriber run is one utterance (reset()
  // starts the next). options.clock, if set, replaces the steady clock for the elapsed times.
  static Result<std::unique_ptr<SpeechTranscriber>> create(SpeechModel& model,
                                                           stream::SessionOptions options);

  // Consumes n samples (16 kHz mono), appends the words they let the model write to `out`. Not after
  // finish() (reset() first). After the model ended the transcript (end marker or max_target_tokens) the
  // remaining audio is only counted.
  Status push(const float* samples, size_t n, std::vector<TranscribedWord>& out);
  // End of the audio: the partial last chunk, the end of the source, the remaining words.
  Status finish(std::vector<TranscribedWord>& out);
  // Starts a new utterance (a fresh Session; the model stays loaded).
  Status reset();

  // Words so far joined by single spaces.
  std::string transcript() const;
  const std::vector<TranscribedWord>& words() const { return words_; }
  bool finished() const { return finished_; }
  size_t samples_pushed() const { return samples_; }
  double audio_ms() const;
  // Computation time of this utterance so far (inside push/finish), ms.
  double compute_ms() const { return compute_ms_; }
  int64_t samples_per_chunk() const { return chunk_samples_; }
  double chunk_ms() const;
  const stream::Session& session() const { return *session_; }

 private:
  SpeechTranscriber(SpeechModel& model, stream::SessionOptions options);
  Status push_ready_chunks(std::vector<TranscribedWord>& out);
  Status push_chunk(size_t n_rows, double duration_ms, std::vector<TranscribedWord>& out);
  // Steps the Session until it needs a chunk that has not arrived, or is finished.
  Status drain(std::vector<TranscribedWord>& out);
  double now_ms() const;
  double samples_ms(int64_t samples) const;

  SpeechModel& model_;
  stream::SessionOptions options_;
  std::unique_ptr<stream::Session> session_;
  speech_encoder::SpeechEmbeddingStream embeddings_;
  int64_t rows_per_chunk_ = 0;
  int64_t chunk_samples_ = 0;
  int n_embd_ = 0;

  std::vector<float> rows_;  // encoder rows not yet pushed (fewer than a chunk after each push)
  std::vector<TranscribedWord> words_;
  size_t samples_ = 0;
  int chunks_pushed_ = 0;
  bool audio_ended_ = false;   // finish() was called
  bool session_done_ = false;  // the Session finished (the transcript is complete)
  bool finished_ = false;
  double compute_ms_ = 0;
  double call_start_ = 0;      // now_ms() at the start of the current push/finish
  double compute_before_ = 0;  // compute_ms_ at the start of the current push/finish
};

}  // namespace gpstream::speech
