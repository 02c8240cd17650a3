// WAV (RIFF/WAVE) reading for the speech front end: integer PCM (8, 16, 24, 32 bit), IEEE float (32, 64 bit)
// and WAVE_FORMAT_EXTENSIBLE, up to 256 channels (downmixed to mono by averaging), 8 to 192 kHz. The file is
// untrusted: every chunk size and offset is checked against the bytes present, and a malformed file gets an
// Error naming the file and the defect, never a crash or a silent repair. The placeholder sizes a recorder
// writes when it cannot seek back (RIFF or data size 0xFFFFFFFF, or both 0) mean "to the end of the file".
// Not handled: compressed formats (A-law, mu-law, ADPCM), RF64/BW64, big-endian RIFX (Unsupported).
// Reading a WAV as it arrives on a pipe: audio/wav_stream.h; other file formats: audio/audio_file.h.
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

// Limits a file must respect (other values are treated as corrupt rather than used). The rate bounds cover
// telephone audio to studio rates; below 8 kHz there is no speech band to keep, and a tiny rate would make
// the resampler to 16 kHz write thousands of samples per input sample.
inline constexpr uint16_t kWavMaxChannels = 256;
inline constexpr uint32_t kWavMinSampleRate = 8'000;
inline constexpr uint32_t kWavMaxSampleRate = 192'000;
// The RIFF/data size a recorder writes when it cannot come back to fill it in: read to the end.
inline constexpr uint32_t kWavUnknownSize = 0xFFFFFFFFu;

// A validated fmt chunk.
struct WavFormat {
  WavSampleFormat kind = WavSampleFormat::Int;
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
  uint16_t block_align = 0;  // bytes per frame = channels x bits / 8
  uint16_t bits = 0;
};

// Parses and checks a fmt chunk payload of `size` bytes (tag, channel count, rate and block align within the
// limits above); `where` prefixes error messages.
Result<WavFormat> parse_wav_fmt(const uint8_t* payload, uint32_t size, const std::string& where);
// Checks a sample rate against [kWavMinSampleRate, kWavMaxSampleRate]; `where` prefixes the message.
Status check_sample_rate(uint64_t rate, const std::string& where);
// Decodes `n_frames` frames of `format` at `frames` into mono floats appended to `out`, or reports the first
// non-finite sample; `first_frame` numbers the frames in messages.
Status decode_wav_frames(const uint8_t* frames, uint64_t n_frames, const WavFormat& format,
                         uint64_t first_frame, const std::string& where, std::vector<float>& out);

// Parses a WAV file held in memory; `name` is used in error messages ("<memory>" if empty).
Result<WavAudio> read_wav(std::span<const std::byte> bytes, const std::string& name = "");
// Reads and parses the WAV file at `path`.
Result<WavAudio> read_wav_file(const std::string& path);

}  // namespace gpstream::audio
