// WAV (RIFF/WAVE) reading for the speech front end: integer PCM (8, 16, 24, 32 bit), IEEE float (32, 64 bit)
// and WAVE_FORMAT_EXTENSIBLE, any channel count (downmixed to mono by averaging), any sample rate. The file
// is untrusted: every chunk size and offset is checked against the bytes present, and a malformed file gets
// an Error naming the file and the defect, never a crash or a silent repair. Not handled: compressed formats
// (A-law, mu-law, ADPCM), RF64/BW64 (>4 GiB), big-endian RIFX; each is reported as Unsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::audio {

enum class WavSampleFormat { Int, Float };

struct WavAudio {
  uint32_t sample_rate = 0;      // frames per second, as declared by the fmt chunk
  uint16_t channels = 0;         // channels in the file (samples below are already mono)
  uint16_t bits_per_sample = 0;  // container bits per sample: 8, 16, 24, 32 or 64
  WavSampleFormat format = WavSampleFormat::Int;
  // One value per frame, in [-1, 1) for integer PCM: the mean of the frame's channels. Integer samples map as
  // s / 2^(bits-1) (8-bit is unsigned: (s - 128) / 128); float samples are taken as they are.
  std::vector<float> samples;
};

// Limits a file must respect (larger values are treated as corrupt rather than allocated).
inline constexpr uint16_t kWavMaxChannels = 256;
inline constexpr uint32_t kWavMaxSampleRate = 1'000'000;

// Parses a WAV file held in memory; `name` is used in error messages ("<memory>" if empty).
Result<WavAudio> read_wav(std::span<const std::byte> bytes, const std::string& name = "");
// Reads and parses the WAV file at `path`.
Result<WavAudio> read_wav_file(const std::string& path);

}  // namespace gpstream::audio
