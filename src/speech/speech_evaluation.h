// The speech evaluation: a SpeechTranscriber run over the utterances of a speech manifest
// (speech/speech_manifest.h), each loaded by speech/speech_loader.h (as recorded unless noise is asked for),
// fed in 10 ms pieces as a live stream would be, and recorded as SimulEval's speech-to-text instances.log
// records (eval/instance_log.h: delays and elapsed in ms, source_length = the audio in ms, source = [the wav
// as written in the manifest], reference = the transcript). `gpstream eval --speech` scores them with
// eval/speech_scores.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "eval/instance_log.h"
#include "speech/speech_loader.h"
#include "speech/speech_transcriber.h"

namespace gpstream::speech {

struct SpeechEvalOptions {
  // add_noise, noise options and seed. The audio is evaluated as given unless add_noise is set: noise is a
  // training augmentation, not part of an evaluation set.
  speech::SpeechLoadOptions load = [] {
    speech::SpeechLoadOptions o;
    o.add_noise = false;
    return o;
  }();
  uint64_t epoch = 0;  // the loader's noise epoch when add_noise (a fixed epoch: reproducible noisy audio)
  // Samples per push (160 = 10 ms). Words and delays do not depend on it; elapsed does: a push computes
  // every chunk its samples complete before the Session writes.
  size_t piece_samples = 160;
};

struct SpeechEvalResult {
  std::vector<eval::InstanceRecord> records;  // index = position in the utterance list
  double audio_seconds = 0;                   // audio transcribed (16 kHz samples / 16000)
  double compute_seconds = 0;                 // time inside the transcriber (loading excluded)
  double real_time_factor() const { return audio_seconds > 0 ? compute_seconds / audio_seconds : 0; }
};

// Transcribes one utterance's samples (16 kHz) with `transcriber` (reset first) into its record.
Result<eval::InstanceRecord> transcribe_to_record(SpeechTranscriber& transcriber,
                                                  const std::vector<float>& samples,
                                                  const speech::SpeechUtterance& utterance, int64_t index,
                                                  size_t piece_samples);

// Every utterance in order; progress(done, total) after each. Errors name the utterance's manifest line.
Result<SpeechEvalResult> evaluate_speech(SpeechModel& model, const stream::SessionOptions& session_options,
                                         const std::vector<speech::SpeechUtterance>& utterances,
                                         const SpeechEvalOptions& options,
                                         const std::function<void(size_t, size_t)>& progress = {});

}  // namespace gpstream::speech
