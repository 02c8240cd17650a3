// A 16-bit mono PCM WAV written byte by byte (RIFF header + samples clamped to [-1, 1] and scaled by 32767), for
// tests that need audio files without trusting the reader under test to have a writer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace gpstream::testing {

inline void write_wav16(const std::string& path, const std::vector<float>& samples, uint32_t rate) {
  auto u32 = [](std::string& s, uint32_t v) {
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  auto u16 = [](std::string& s, uint16_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  };
  const uint32_t data = static_cast<uint32_t>(samples.size() * 2);
  std::string b = "RIFF";
  u32(b, 36 + data);
  b += "WAVEfmt ";
  u32(b, 16);  // fmt chunk size
  u16(b, 1);   // PCM
  u16(b, 1);   // mono
  u32(b, rate);
  u32(b, rate * 2);  // bytes per second
  u16(b, 2);         // block align
  u16(b, 16);        // bits per sample
  b += "data";
  u32(b, data);
  for (float x : samples) {
    const long v = std::lround(std::clamp(x, -1.0f, 1.0f) * 32767.0f);
    u16(b, static_cast<uint16_t>(static_cast<int16_t>(v)));
  }
  std::ofstream(path, std::ios::binary) << b;
}

}  // namespace gpstream::testing
