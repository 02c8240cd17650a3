// Speech manifests: the utterances of a speech set, in one of two UTF-8 tab-separated forms.
// Generated (scripts/make-speech-data, docs/speech.md): a header line, then six fields per utterance:
//   wav<TAB>transcript<TAB>voice<TAB>speed<TAB>pitch<TAB>duration_ms
//   wav/train-000001.wav<TAB>Select the cells.<TAB>en-us+m1<TAB>170<TAB>50<TAB>2214
// voice is the espeak-ng voice (ACCENT+VARIANT), speed in words per minute, pitch 0..99, duration_ms the
// audio length (floor(samples * 1000 / rate)), which the loader checks the file against. Plain (any
// recordings): two fields per line, audio<TAB>transcript, with an optional first line `audio<TAB>transcript`
// (or `wav<TAB>transcript`) as a header; the audio may be any format audio_file.h reads. Paths are relative
// to the manifest's folder. The file is untrusted: every line is checked, and the first defect is reported as
// "FILE:LINE: what" (an absolute path or a ".." component, a wrong field count, an empty or non-numeric
// field, a number out of range, invalid UTF-8, control characters, a duplicate path, an over-long line...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::speech {

struct SpeechUtterance {
  std::string wav;         // as written in the manifest (relative to it); also the utterance's identity
  std::string wav_path;    // the file to open: the manifest's folder joined with `wav`
  std::string transcript;  // the text spoken, exactly as written
  std::string voice;       // espeak-ng voice, e.g. "en-gb-scotland+f3"
  uint32_t speed = 0;      // words per minute (espeak-ng -s)
  uint32_t pitch = 0;      // 0..99 (espeak-ng -p)
  uint32_t duration_ms = 0;
  // Whether voice, speed, pitch and duration_ms were given (a generated manifest); in a plain manifest they
  // are unknown: voice empty, the numbers 0, and no length check.
  bool has_metadata = true;
  size_t line = 0;  // 1-based line in the manifest, for messages
};

struct SpeechManifest {
  std::string path;  // as given to the reader (used in messages)
  std::vector<SpeechUtterance> utterances;
};

// The generated form's header line, exactly.
inline constexpr std::string_view kSpeechManifestHeader = "wav\ttranscript\tvoice\tspeed\tpitch\tduration_ms";
// The plain form's optional header lines.
inline constexpr std::string_view kPlainManifestHeader = "audio\ttranscript";
inline constexpr std::string_view kPlainManifestWavHeader = "wav\ttranscript";
// Limits (larger values are treated as corrupt).
inline constexpr size_t kSpeechManifestMaxBytes = size_t{256} << 20;  // 256 MiB
inline constexpr size_t kSpeechManifestMaxLine = size_t{64} << 10;    // 64 KiB per line
inline constexpr size_t kSpeechMaxVoiceLength = 64;
inline constexpr uint32_t kSpeechMinSpeed = 1;
inline constexpr uint32_t kSpeechMaxSpeed = 1000;
inline constexpr uint32_t kSpeechMaxPitch = 99;
inline constexpr uint32_t kSpeechMaxDurationMs = 600'000;  // 10 minutes

// Parses a manifest held in memory; the first line decides the form (the generated header, else two fields:
// plain). `name` is used in messages; `base_dir` is the folder relative paths are resolved against (empty:
// the current folder). A trailing newline is optional and a CR before each LF is accepted; a manifest
// without utterances is an error.
Result<SpeechManifest> parse_speech_manifest(std::span<const std::byte> bytes, const std::string& name,
                                             const std::string& base_dir);
// Reads and parses the manifest at `path` (wav paths resolved against its folder).
Result<SpeechManifest> read_speech_manifest(const std::string& path);

}  // namespace gpstream::speech
