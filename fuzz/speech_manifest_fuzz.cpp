// Fuzz target: a speech manifest (speech/speech_manifest.h, generated or plain) parsed from memory. Beyond
// not crashing, an accepted manifest must satisfy what the header promises of every utterance.
#include <cstdlib>
#include <set>

#include "speech/speech_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace speech = gpstream::speech;
  auto m =
      speech::parse_speech_manifest({reinterpret_cast<const std::byte*>(data), size}, "fuzz.tsv", "base");
  if (!m.ok()) {
    if (m.error().message().empty()) std::abort();  // every refusal says why
    return 0;
  }
  if (m->utterances.empty()) std::abort();
  std::set<std::string> seen;
  size_t last_line = 0;
  for (const speech::SpeechUtterance& u : m->utterances) {
    if (u.wav.empty() || u.wav.front() == '/' || u.transcript.empty()) std::abort();
    if (u.has_metadata != m->utterances.front().has_metadata) std::abort();  // one form per manifest
    if (!u.has_metadata) {  // a plain manifest: no voice, numbers unknown
      if (!u.voice.empty() || u.speed || u.pitch || u.duration_ms) std::abort();
    } else {
      if (u.voice.empty() || u.voice.size() > speech::kSpeechMaxVoiceLength) std::abort();
      if (u.speed < speech::kSpeechMinSpeed || u.speed > speech::kSpeechMaxSpeed) std::abort();
      if (u.pitch > speech::kSpeechMaxPitch || u.duration_ms < 1 ||
          u.duration_ms > speech::kSpeechMaxDurationMs)
        std::abort();
    }
    if (u.wav_path.rfind("base/", 0) != 0) std::abort();  // resolved under the manifest's folder
    if (!seen.insert(u.wav).second) std::abort();         // duplicates are refused
    if (u.line <= last_line) std::abort();                // lines in file order, after the header
    last_line = u.line;
    for (char c : u.wav + u.transcript + u.voice)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();  // no control characters
  }
  return 0;
}
