// The byte-level pieces of the RIFF layout that the file reader (audio/wav.cpp) and the stream reader
// (audio/wav_stream.cpp) both read: little-endian fields and a chunk's four-character id.
#pragma once

#include <cstdint>
#include <string>

namespace gpstream::audio {

inline uint16_t riff_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t riff_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// The chunk id at `p` for messages: its four bytes, each one that is not printable ASCII as '?'.
inline std::string riff_chunk_id(const uint8_t* p) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const char c = static_cast<char>(p[i]);
    s += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return s;
}

}  // namespace gpstream::audio
