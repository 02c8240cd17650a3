// Transcription of audio of any length: a SpeechTranscriber per utterance, the utterances cut at pauses
// (audio::PauseDetector). Each segment is transcribed as its own utterance (a fresh Session, the model
// kept), so memory stays bounded by one segment however long the recording; quiet stretches between
// segments are skipped. The words come out with delays and elapsed times counted from the start of the
// whole audio: a segment's words get its start (ms) added to their SpeechTranscriber timing. As with
// SpeechTranscriber, the words depend only on the samples, not on how they are split into push() calls.
// docs/speech.md, "Recordings of any length".
#pragma once

#include <memory>
#include <vector>

#include "audio/pause_detector.h"
#include "speech/speech_transcriber.h"

namespace gpstream::speech {

class SegmentedTranscriber {
 public:
  static Result<std::unique_ptr<SegmentedTranscriber>> create(SpeechModel& model,
                                                              stream::SessionOptions options,
                                                              audio::PauseOptions pauses = {});

  // Consumes n samples (16 kHz mono); appends the words they let the model write to `out`.
  Status push(const float* samples, size_t n, std::vector<TranscribedWord>& out);
  // End of the audio: the open segment's remaining words.
  Status finish(std::vector<TranscribedWord>& out);
  // Starts a new recording.
  Status reset();

  // Words of the recording so far, joined by single spaces.
  std::string transcript() const;
  // Segments begun so far.
  size_t segments() const { return segments_; }
  double audio_ms() const;

 private:
  SegmentedTranscriber(std::unique_ptr<SpeechTranscriber> inner, audio::PauseOptions pauses);
  Status frame(const float* samples, size_t n, std::vector<TranscribedWord>& out);
  // Pushes samples into the open segment's transcriber and appends its words, shifted to stream time.
  Status push_inner(const float* samples, size_t n, std::vector<TranscribedWord>& out);
  Status end_segment(std::vector<TranscribedWord>& out);
  void shift_and_append(std::vector<TranscribedWord>& words, std::vector<TranscribedWord>& out);

  std::unique_ptr<SpeechTranscriber> inner_;
  audio::PauseOptions pauses_;
  audio::PauseDetector detector_;
  std::vector<float> partial_;  // samples of a 10 ms frame not yet complete
  bool open_ = false;           // a segment is being transcribed
  double segment_start_ms_ = 0;
  size_t segments_ = 0;
  std::vector<TranscribedWord> words_;
  std::vector<TranscribedWord> scratch_;
};

}  // namespace gpstream::speech
