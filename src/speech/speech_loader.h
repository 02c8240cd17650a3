// Loading one utterance of a speech manifest for training or evaluation: read its audio file (any format
// audio/audio_file.h reads), check its length against a generated manifest's duration_ms, resample to the
// front end's 16 kHz, and (optionally) mix in seeded noise whose seed comes from (options.seed, epoch, the
// utterance's path as written in the manifest), so an utterance gets the same noise in the same epoch
// whatever the manifest's order, and new noise in every epoch.
#pragma once

#include <cstdint>
#include <vector>

#include "audio/noise.h"
#include "speech/speech_manifest.h"
#include "util/error.h"

namespace gpstream::speech {

struct SpeechLoadOptions {
  bool add_noise = true;
  audio::NoiseOptions noise;
  uint64_t seed = 1;
  // Largest accepted |WAV length - manifest duration_ms|, in ms (the manifest floors; other tools may round).
  uint32_t duration_tolerance_ms = 1;
};

struct LoadedSpeech {
  std::vector<float> samples;  // 16 kHz mono (audio::kLogMelSampleRate), noise included
  uint32_t source_rate = 0;    // the WAV's sample rate
  audio::NoiseDraw noise;      // what was mixed in (clean = true when add_noise is false)
};

// Reads, checks, resamples and noises `utterance`. Errors name the audio file (and the manifest line for a
// length mismatch); InvalidArgument for invalid noise options.
Result<LoadedSpeech> load_speech_utterance(const SpeechUtterance& utterance, uint64_t epoch,
                                           const SpeechLoadOptions& options);

}  // namespace gpstream::speech
