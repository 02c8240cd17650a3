// Loading a manifest utterance: audio file -> length check -> 16 kHz -> seeded noise (at 16 kHz, after
// resampling, so the noise covers the whole band the log-mel features see).
#include "speech/speech_loader.h"

#include "audio/audio_file.h"
#include "audio/log_mel.h"
#include "audio/resample.h"

namespace gpstream::speech {

Result<LoadedSpeech> load_speech_utterance(const SpeechUtterance& u, uint64_t epoch,
                                           const SpeechLoadOptions& options) {
  if (options.add_noise) GPS_TRY(audio::validate_noise_options(options.noise));
  GPS_ASSIGN(audio::WavAudio wav, audio::read_audio_file(u.wav_path));
  const uint64_t ms = static_cast<uint64_t>(wav.samples.size()) * 1000 / wav.sample_rate;
  const uint64_t diff = ms > u.duration_ms ? ms - u.duration_ms : u.duration_ms - ms;
  if (u.has_metadata && diff > options.duration_tolerance_ms)
    return format_error(u.wav_path + ": " + std::to_string(ms) + " ms of audio, but line " +
                        std::to_string(u.line) + " of the manifest says " + std::to_string(u.duration_ms) +
                        " ms (file replaced or truncated?)");
  LoadedSpeech out;
  out.source_rate = wav.sample_rate;
  GPS_ASSIGN(out.samples, audio::resample(wav.samples, wav.sample_rate, audio::kLogMelSampleRate));
  out.noise.clean = true;
  if (options.add_noise) {
    const uint64_t seed = audio::noise_seed(options.seed, epoch, audio::noise_utterance_key(u.wav));
    GPS_ASSIGN(out.noise, audio::add_noise(out.samples, options.noise, seed));
  }
  return out;
}

}  // namespace gpstream::speech
