// Speech manifests: the list of utterances of a synthetic speech split written by scripts/make-speech-data
// (docs/speech.md). A UTF-8 text file, one header line and then one utterance per line, six tab-separated
// fields:
//   wav<TAB>transcript<TAB>voice<TAB>speed<TAB>pitch<TAB>duration_ms
//   wav/train-000001.wav<TAB>Select the cells.<TAB>en-us+m1<TAB>170<TAB>50<TAB>2214
// wav is relative to the manifest's folder; voice is the espeak-ng voice (ACCENT+VARIANT), speed in words per
// minute, pitch 0..99, duration_ms the audio length (floor(samples * 1000 / rate)).
// The file is untrusted: every line is checked, and the first defect is reported as "FILE:LINE: what" (an
// absolute path or a ".." component in wav, a field count other than 6, an empty or non-numeric field, a
// number out of range, invalid UTF-8, control characters, a duplicate wav, an over-long line...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::audio {

struct SpeechUtterance {
  std::string wav;         // as written in the manifest (relative to it); also the utterance's identity
  std::string wav_path;    // the file to open: the manifest's folder joined with `wav`
  std::string transcript;  // the text spoken, exactly as written
  std::string voice;       // espeak-ng voice, e.g. "en-gb-scotland+f3"
  uint32_t speed = 0;      // words per minute (espeak-ng -s)
  uint32_t pitch = 0;      // 0..99 (espeak-ng -p)
  uint32_t duration_ms = 0;
  size_t line = 0;  // 1-based line in the manifest, for messages
};

struct SpeechManifest {
  std::string path;  // as given to the reader (used in messages)
  std::vector<SpeechUtterance> utterances;
};

// The header line, exactly.
inline constexpr std::string_view kSpeechManifestHeader = "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms";
// Limits (larger values are treated as corrupt).
inline constexpr size_t kSpeechManifestMaxBytes = size_t{256} << 20;  // 256 MiB
inline constexpr size_t kSpeechManifestMaxLine = size_t{64} << 10;    // 64 KiB per line
inline constexpr size_t kSpeechMaxVoiceLength = 64;
inline constexpr uint32_t kSpeechMinSpeed = 1;
inline constexpr uint32_t kSpeechMaxSpeed = 1000;
inline constexpr uint32_t kSpeechMaxPitch = 99;
inline constexpr uint32_t kSpeechMaxDurationMs = 600'000;  // 10 minutes

// Parses a manifest held in memory. `name` is used in messages; `base_dir` is the folder relative wav paths
// are resolved against (empty: the current folder). A trailing newline is optional and a CR before each LF
// is accepted; a manifest without utterances is an error.
Result<SpeechManifest> parse_speech_manifest(std::span<const std::byte> bytes, const std::string& name,
                                             const std::string& base_dir);
// Reads and parses the manifest at `path` (wav paths resolved against its folder).
Result<SpeechManifest> read_speech_manifest(const std::string& path);

}  // namespace gpstream::audio
