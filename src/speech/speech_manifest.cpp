// Speech manifest reader: splits lines (LF, optional CR before it), tells the form from the first line, then
// checks each line's fields (six, or two in a plain manifest) in order, stopping at the first defect with
// "FILE:LINE: what". The bytes are never trusted: sizes are bounded before anything is allocated, numbers are
// parsed digit by digit with an overflow bound, text must be valid UTF-8 without control characters, and wav
// paths must stay inside the manifest's folder.
#include "speech/speech_manifest.h"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "util/mapped_file.h"

namespace gpstream::speech {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid (overlong forms, surrogates,
// code points above U+10FFFF and truncated sequences are invalid).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

// Empty if `s` is valid UTF-8 without ASCII control characters (tab included) or DEL; else what is wrong.
std::string text_defect(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      return std::string("control character ") + hex + " at byte " + std::to_string(i);
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return "invalid UTF-8 at byte " + std::to_string(i);
    i += n;
  }
  return {};
}

// A decimal number of at most 9 digits (no sign, no spaces) within [lo, hi].
Result<uint32_t> parse_bounded(std::string_view field, const char* what, uint32_t lo, uint32_t hi) {
  if (field.empty()) return format_error(std::string(what) + " is empty");
  if (field.size() > 9 || field.find_first_not_of("0123456789") != std::string_view::npos)
    return format_error(std::string(what) + " '" + std::string(field.substr(0, 20)) +
                        "' is not a non-negative integer of at most 9 digits");
  uint32_t v = 0;
  std::from_chars(field.data(), field.data() + field.size(), v);  // cannot fail: <= 9 digits
  if (v < lo || v > hi)
    return format_error(std::string(what) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) +
                        ", " + std::to_string(hi) + "]");
  return v;
}

// Empty if `wav` is a usable relative path inside the manifest's folder; else what is wrong.
std::string wav_path_defect(std::string_view wav) {
  if (wav.empty()) return "wav path is empty";
  if (wav.size() > 4096) return "wav path is longer than 4096 bytes";
  if (wav.front() == '/')
    return "wav path '" + std::string(wav) + "' is absolute (must be relative to the manifest)";
  if (wav.find('\\') != std::string_view::npos) return "wav path contains a backslash";
  size_t start = 0;
  while (start <= wav.size()) {
    const size_t end = std::min(wav.find('/', start), wav.size());
    const std::string_view part = wav.substr(start, end - start);
    if (part == "..")
      return "wav path '" + std::string(wav) + "' has a '..' component (must stay in the manifest's folder)";
    start = end + 1;
  }
  if (wav.back() == '/') return "wav path '" + std::string(wav) + "' names a folder";
  return text_defect(wav);
}

// Empty if `voice` looks like an espeak-ng voice name: 1..64 characters from [A-Za-z0-9+._-].
std::string voice_defect(std::string_view voice) {
  if (voice.empty()) return "voice is empty";
  if (voice.size() > kSpeechMaxVoiceLength)
    return "voice is longer than " + std::to_string(kSpeechMaxVoiceLength) + " characters";
  for (char c : voice) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
                    c == '.' || c == '_' || c == '-';
    if (!ok)
      return "voice '" + std::string(voice.substr(0, 64)) + "' has a character outside [A-Za-z0-9+._-]";
  }
  return {};
}

// Splits at tabs into at most 6 fields; returns the number of fields the line has.
size_t split_fields(std::string_view line, std::string_view (&fields)[6]) {
  size_t count = 0, start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    const size_t end = tab == std::string_view::npos ? line.size() : tab;
    if (count < 6) fields[count] = line.substr(start, end - start);
    ++count;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return count;
}

enum class Form { Generated, Plain };

Result<SpeechUtterance> parse_line(std::string_view line, const std::string& base_dir, Form form) {
  std::string_view fields[6];
  const size_t count = split_fields(line, fields);
  if (form == Form::Generated && count != 6)
    return format_error(
        "expected 6 tab-separated fields (wav, transcript, voice, speed, pitch, duration_ms), got " +
        std::to_string(count));
  if (form == Form::Plain && count != 2)
    return format_error("expected 2 tab-separated fields (audio, transcript), got " + std::to_string(count));
  SpeechUtterance u;
  if (auto d = wav_path_defect(fields[0]); !d.empty()) return format_error(d);
  u.wav = fields[0];
  u.wav_path = base_dir.empty() ? u.wav : (std::filesystem::path(base_dir) / u.wav).string();

  const std::string_view text = fields[1];
  if (text.find_first_not_of(' ') == std::string_view::npos) return format_error("transcript is empty");
  if (auto d = text_defect(text); !d.empty()) return format_error("transcript: " + d);
  u.transcript = text;
  if (form == Form::Plain) {
    u.has_metadata = false;
    return u;
  }

  if (auto d = voice_defect(fields[2]); !d.empty()) return format_error(d);
  u.voice = fields[2];
  GPS_ASSIGN(u.speed, parse_bounded(fields[3], "speed", kSpeechMinSpeed, kSpeechMaxSpeed));
  GPS_ASSIGN(u.pitch, parse_bounded(fields[4], "pitch", 0, kSpeechMaxPitch));
  GPS_ASSIGN(u.duration_ms, parse_bounded(fields[5], "duration_ms", 1, kSpeechMaxDurationMs));
  return u;
}

}  // namespace

Result<SpeechManifest> parse_speech_manifest(std::span<const std::byte> bytes, const std::string& name,
                                             const std::string& base_dir) {
  const std::string where = name.empty() ? "<memory>" : name;
  if (bytes.size() > kSpeechManifestMaxBytes)
    return format_error(where + ": " + std::to_string(bytes.size()) + " bytes, more than the limit of " +
                        std::to_string(kSpeechManifestMaxBytes));
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.empty()) return format_error(where + ": empty file (expected the header line)");

  SpeechManifest m;
  m.path = where;
  std::unordered_map<std::string, size_t> line_of_wav;
  Form form = Form::Generated;
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    const std::string at = where + ":" + std::to_string(line_no) + ": ";
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kSpeechManifestMaxLine)
      return format_error(at + "line of " + std::to_string(line.size()) +
                          " bytes, longer than the limit of " + std::to_string(kSpeechManifestMaxLine));
    if (line_no == 1) {
      std::string_view fields[6];
      if (line == kSpeechManifestHeader) continue;
      if (split_fields(line, fields) != 2)
        return format_error(at +
                            "expected the header 'wav<TAB>transcript<TAB>voice<TAB>speed<TAB>pitch<TAB>"
                            "duration_ms' or a plain 'audio<TAB>transcript' line, got '" +
                            std::string(line.substr(0, 80)) + "'");
      form = Form::Plain;
      if (line == kPlainManifestHeader || line == kPlainManifestWavHeader) continue;
    }
    if (line.empty()) return format_error(at + "empty line");
    auto u = parse_line(line, base_dir, form);
    if (!u.ok()) return u.error().with_context(at.substr(0, at.size() - 2));
    u->line = line_no;
    auto [it, inserted] = line_of_wav.emplace(u->wav, line_no);
    if (!inserted)
      return format_error(at + "wav '" + u->wav + "' is already listed on line " +
                          std::to_string(it->second));
    m.utterances.push_back(std::move(u).value());
  }
  if (m.utterances.empty()) return format_error(where + ": no utterances (only the header)");
  return m;
}

Result<SpeechManifest> read_speech_manifest(const std::string& path) {
  GPS_ASSIGN(auto file, MappedFile::open(path));
  return parse_speech_manifest(file->bytes(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace gpstream::speech
