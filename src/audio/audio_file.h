// Audio files of any common format, as mono float samples at the file's rate. WAV files (RIFF/WAVE) go
// through audio/wav.h's own reader (its checks of every size, its exact sample mapping); every other file
// goes to libsndfile (Debian 12's 1.2: FLAC, Ogg Vorbis and Opus, MP3, AIFF, AU, CAF, W64, RF64, ...), with
// the limits of the WAV reader applied to what it reports: 1 to 256 channels, 8 to 192 kHz, and at most
// kAudioMaxFrames frames decoded (a small compressed file can expand to any length). Channels are averaged
// into mono in double; integer codecs map s to s / 2^(bits-1) as the WAV reader does, so a FLAC file reads to
// the same floats as the WAV it was made from. Non-finite decoded samples are an error.
#pragma once

#include <cstdint>
#include <string>

#include "audio/wav.h"
#include "util/error.h"

namespace gpstream::audio {

// Decoded frames per file at most: 2^30 (6.2 hours at 48 kHz, 4 GiB of floats).
inline constexpr uint64_t kAudioMaxFrames = uint64_t{1} << 30;

// Reads the audio file at `path`. For files read by libsndfile, `bits_per_sample` is the codec's sample width
// where it has one (16 or 24 for FLAC, 0 for Vorbis, Opus and MP3) and `format` is Float for those without.
// Errors name the file: Io when it cannot be opened, Format for a file that is not audio or is corrupt.
Result<WavAudio> read_audio_file(const std::string& path);

}  // namespace gpstream::audio
