// Fuzz target: a WAV file parsed from memory (RIFF chunk walk, fmt variants, sample decoding), then what the
// speech front end does with a file that reads: resampling to 16 kHz and streaming log-mel extraction. The
// same bytes go through the incremental reader (audio/wav_stream.h) in three pieces: it must not crash, and
// when both readers accept the bytes they give the same samples.
// Audio is capped at 4096 samples so awkward rate pairs (per-sample resampler phases) stay fast.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/wav.h"
#include "audio/wav_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace audio = gpstream::audio;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto wav_stream = audio::WavStream::wav("fuzz.wav");
  std::vector<float> streamed;
  const size_t a = size / 3, b = 2 * size / 3;
  const bool stream_ok = wav_stream.push(bytes.subspan(0, a), streamed).ok() &&
                         wav_stream.push(bytes.subspan(a, b - a), streamed).ok() &&
                         wav_stream.push(bytes.subspan(b), streamed).ok() && wav_stream.finish().ok();
  auto wav = audio::read_wav(bytes, "fuzz.wav");
  if (!wav.ok()) return 0;
  if (stream_ok && streamed != wav->samples) std::abort();
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
