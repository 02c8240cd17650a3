// WAV files written byte by byte, for tests that need audio files without trusting the reader under test to
// have a writer: the RIFF pieces (little-endian fields, chunks, a fmt chunk, the RIFF/WAVE form) to build
// well-formed and hostile files from, and a whole 16-bit mono PCM file (samples clamped to [-1, 1] and scaled
// by 32767).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace gpstream::testing {

// The pieces, under short names for the tests that spell files out: `using namespace testing::wav_bytes;`.
namespace wav_bytes {

inline std::string le16(uint16_t v) {
  return {static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
}
inline std::string le32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
// A chunk with its pad byte when the payload is odd (unless `size` overrides the declared size).
inline std::string chunk(const std::string& id, const std::string& payload, int64_t size = -1) {
  std::string c =
      id + le32(size < 0 ? static_cast<uint32_t>(payload.size()) : static_cast<uint32_t>(size)) + payload;
  if (payload.size() % 2) c += '\0';
  return c;
}
// The 16 basic bytes of a fmt chunk; block align channels x bits / 8 unless `block_align` overrides it.
inline std::string fmt_payload(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits,
                               int block_align = -1) {
  const uint16_t align =
      block_align < 0 ? static_cast<uint16_t>(channels * bits / 8) : static_cast<uint16_t>(block_align);
  return le16(tag) + le16(channels) + le32(rate) + le32(rate * align) + le16(align) + le16(bits);
}
inline std::string fmt_chunk(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits) {
  return chunk("fmt ", fmt_payload(tag, channels, rate, bits));
}
// The RIFF/WAVE form around `body` (its chunks), with the RIFF size of that body.
inline std::string riff(const std::string& body) {
  return "RIFF" + le32(static_cast<uint32_t>(4 + body.size())) + "WAVE" + body;
}
inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace wav_bytes

// A 44-byte header (RIFF size at 4, fmt at 12, data size at 40), then the samples.
inline void write_wav16(const std::string& path, const std::vector<float>& samples, uint32_t rate) {
  using namespace wav_bytes;
  std::string data;
  for (float x : samples) {
    const long v = std::lround(std::clamp(x, -1.0f, 1.0f) * 32767.0f);
    data += le16(static_cast<uint16_t>(static_cast<int16_t>(v)));
  }
  std::ofstream(path, std::ios::binary) << riff(fmt_chunk(1, 1, rate, 16) + chunk("data", data));
}

}  // namespace gpstream::testing
