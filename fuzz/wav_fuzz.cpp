// Fuzz target: a WAV file parsed from memory (RIFF chunk walk, fmt variants, sample decoding), then what the
// speech front end does with a file that reads: resampling to 16 kHz and streaming log-mel extraction.
// Audio is capped at 4096 samples so awkward rate pairs (per-sample resampler phases) stay fast.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/wav.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace audio = gpstream::audio;
  auto wav = audio::read_wav({reinterpret_cast<const std::byte*>(data), size}, "fuzz.wav");
  if (!wav.ok()) return 0;
  for (float v : wav->samples)
    if (!std::isfinite(v)) std::abort();  // the reader promises finite samples
  const size_t n = std::min<size_t>(wav->samples.size(), 4096);
  auto mono16k = audio::resample({wav->samples.data(), n}, wav->sample_rate, audio::kLogMelSampleRate);
  if (!mono16k.ok()) std::abort();  // every rate the reader accepts is a valid resampler rate
  audio::LogMelStream stream;
  std::vector<float> frames;
  stream.push(mono16k->data(), mono16k->size(), frames);
  if (frames.size() != audio::log_mel_frame_count(mono16k->size()) * audio::kLogMelBins) std::abort();
  return 0;
}
