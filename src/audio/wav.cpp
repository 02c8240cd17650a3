// WAV reader. Layout (little-endian): "RIFF" u32 size "WAVE", then chunks of (4-byte id, u32 size, payload,
// one pad byte if size is odd). Only "fmt " and "data" are read; other chunks (LIST, fact, cue, ...) are
// skipped after their bounds are checked. A data size of 0xFFFFFFFF (or 0 under a RIFF size of 0 or
// 0xFFFFFFFF) is a recorder's placeholder: the data runs to the end of the form. All offsets are 64-bit and
// compared against the bytes present before anything is read, so a hostile size can neither read out of
// bounds nor trigger a large allocation (the sample buffer is bounded by the data chunk, which is bounded by
// the file).
#include "audio/wav.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "audio/riff_bytes.h"
#include "util/mapped_file.h"

namespace gpstream::audio {
namespace {

constexpr uint16_t kTagPcm = 0x0001;
constexpr uint16_t kTagFloat = 0x0003;
constexpr uint16_t kTagExtensible = 0xFFFE;
// KSDATAFORMAT_SUBTYPE_* GUIDs share these last 14 bytes; the first two hold the format tag.
constexpr uint8_t kSubformatTail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                        0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

// One sample as a double: integers scaled by 2^-(bits-1), floats as stored.
double decode_sample(const uint8_t* p, const WavFormat& f) {
  if (f.kind == WavSampleFormat::Float) {
    if (f.bits == 32) {
      float v;
      std::memcpy(&v, p, 4);  // little-endian host (x86-64)
      return v;
    }
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  switch (f.bits) {
    case 8:
      return (static_cast<int>(p[0]) - 128) / 128.0;
    case 16:
      return static_cast<int16_t>(riff_u16(p)) / 32768.0;
    case 24: {
      // Sign-extend via the top byte of a 32-bit word.
      const int32_t v =
          static_cast<int32_t>(static_cast<uint32_t>(p[0]) << 8 | static_cast<uint32_t>(p[1]) << 16 |
                               static_cast<uint32_t>(p[2]) << 24) >>
          8;
      return v / 8388608.0;
    }
    default:
      return static_cast<int32_t>(riff_u32(p)) / 2147483648.0;
  }
}

}  // namespace

Status check_sample_rate(uint64_t rate, const std::string& where) {
  if (rate == 0) return format_error(where + ": a sample rate of 0");
  if (rate < kWavMinSampleRate)
    return format_error(where + ": sample rate " + std::to_string(rate) + " Hz is below the minimum of " +
                        std::to_string(kWavMinSampleRate) + " Hz");
  if (rate > kWavMaxSampleRate)
    return format_error(where + ": sample rate " + std::to_string(rate) + " Hz exceeds the limit of " +
                        std::to_string(kWavMaxSampleRate) + " Hz");
  return {};
}

Result<WavFormat> parse_wav_fmt(const uint8_t* p, uint32_t size, const std::string& where) {
  if (size < 16)
    return format_error(where + ": fmt chunk has " + std::to_string(size) + " bytes (need at least 16)");
  uint16_t tag = riff_u16(p);
  WavFormat f;
  f.channels = riff_u16(p + 2);
  f.sample_rate = riff_u32(p + 4);
  f.block_align = riff_u16(p + 12);
  f.bits = riff_u16(p + 14);
  if (tag == kTagExtensible) {
    // cbSize (2) + valid bits (2) + channel mask (4) + subformat GUID (16) after the 16 basic bytes.
    if (size < 40)
      return format_error(where + ": WAVE_FORMAT_EXTENSIBLE fmt chunk has " + std::to_string(size) +
                          " bytes (need 40)");
    const uint16_t cb_size = riff_u16(p + 16);
    if (cb_size < 22)
      return format_error(where + ": WAVE_FORMAT_EXTENSIBLE cbSize is " + std::to_string(cb_size) +
                          " (need 22)");
    const uint16_t valid_bits = riff_u16(p + 18);
    if (valid_bits > f.bits)
      return format_error(where + ": " + std::to_string(valid_bits) + " valid bits exceed the " +
                          std::to_string(f.bits) + "-bit container");
    if (std::memcmp(p + 26, kSubformatTail, sizeof kSubformatTail) != 0)
      return unsupported(where + ": WAVE_FORMAT_EXTENSIBLE subformat GUID is not a standard WAVE format");
    tag = riff_u16(p + 24);
  }
  if (tag == kTagPcm) {
    f.kind = WavSampleFormat::Int;
    if (f.bits != 8 && f.bits != 16 && f.bits != 24 && f.bits != 32)
      return unsupported(where + ": integer PCM with " + std::to_string(f.bits) +
                         " bits per sample (supported: 8, 16, 24, 32)");
  } else if (tag == kTagFloat) {
    f.kind = WavSampleFormat::Float;
    if (f.bits != 32 && f.bits != 64)
      return unsupported(where + ": float samples with " + std::to_string(f.bits) +
                         " bits (supported: 32, 64)");
  } else {
    return unsupported(where + ": format tag 0x" + [&] {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%04x", tag);
      return std::string(buf);
    }() + " (supported: integer PCM, IEEE float, WAVE_FORMAT_EXTENSIBLE of either)");
  }
  if (f.channels == 0) return format_error(where + ": fmt declares 0 channels");
  if (f.channels > kWavMaxChannels)
    return format_error(where + ": fmt declares " + std::to_string(f.channels) + " channels (limit " +
                        std::to_string(kWavMaxChannels) + ")");
  GPS_TRY(check_sample_rate(f.sample_rate, where));
  const uint32_t expected_align = static_cast<uint32_t>(f.channels) * (f.bits / 8u);
  if (f.block_align != expected_align)
    return format_error(where + ": block align " + std::to_string(f.block_align) + " does not match " +
                        std::to_string(f.channels) + " channels x " + std::to_string(f.bits) +
                        " bits (expected " + std::to_string(expected_align) + ")");
  return f;
}

Status decode_wav_frames(const uint8_t* frames, uint64_t n_frames, const WavFormat& format,
                         uint64_t first_frame, const std::string& where, std::vector<float>& out) {
  const uint32_t sample_bytes = format.bits / 8u;
  if (out.capacity() < out.size() + n_frames)
    out.reserve(std::max<size_t>(out.size() + n_frames, 2 * out.capacity()));
  for (uint64_t i = 0; i < n_frames; ++i) {
    const uint8_t* frame = frames + i * format.block_align;
    double sum = 0.0;
    for (uint32_t c = 0; c < format.channels; ++c) {
      const double v = decode_sample(frame + c * sample_bytes, format);
      if (!std::isfinite(v))
        return format_error(where + ": non-finite float sample at frame " + std::to_string(first_frame + i) +
                            ", channel " + std::to_string(c));
      sum += v;
    }
    const double mono = sum / format.channels;
    // Float files may hold values beyond float's range after averaging 64-bit input; those are corrupt too.
    if (!std::isfinite(static_cast<float>(mono)))
      return format_error(where + ": sample at frame " + std::to_string(first_frame + i) +
                          " is out of float range");
    out.push_back(static_cast<float>(mono));
  }
  return {};
}

Result<WavAudio> read_wav(std::span<const std::byte> bytes, const std::string& name) {
  const std::string where = name.empty() ? "<memory>" : name;
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint64_t file_size = bytes.size();
  if (file_size < 12)
    return format_error(where + ": " + std::to_string(file_size) +
                        " bytes is too short for a RIFF/WAVE header");
  if (std::memcmp(base, "RIFX", 4) == 0)
    return unsupported(where + ": big-endian RIFX files are not supported");
  if (std::memcmp(base, "RF64", 4) == 0 || std::memcmp(base, "BW64", 4) == 0)
    return unsupported(where + ": RF64/BW64 (64-bit WAV) files are not supported");
  if (std::memcmp(base, "RIFF", 4) != 0) return format_error(where + ": not a RIFF file (no 'RIFF' magic)");
  if (std::memcmp(base + 8, "WAVE", 4) != 0)
    return format_error(where + ": RIFF file is not WAVE (no 'WAVE' form)");
  const uint32_t declared_riff = riff_u32(base + 4);
  // A streaming header (RIFF size 0 or 0xFFFFFFFF): the form, and a data chunk of unknown size, run to the
  // end.
  const bool streamed = declared_riff == 0 || declared_riff == kWavUnknownSize;
  const uint64_t riff_size = streamed ? file_size - 8 : declared_riff;
  if (riff_size < 4)
    return format_error(where + ": RIFF size " + std::to_string(riff_size) + " is too small");
  if (riff_size > file_size - 8)
    return format_error(where + ": RIFF size " + std::to_string(riff_size) +
                        " runs past the end of the file (" + std::to_string(file_size) +
                        " bytes; truncated?)");
  const uint64_t end = 8 + riff_size;  // bytes after the RIFF form (trailing junk) are not ours

  std::optional<WavFormat> fmt;
  const uint8_t* data = nullptr;
  uint64_t data_size = 0;
  uint64_t pos = 12;
  while (pos < end) {
    if (end - pos < 8)
      return format_error(where + ": truncated chunk header at offset " + std::to_string(pos) + " (" +
                          std::to_string(end - pos) + " bytes left)");
    const std::string id = riff_chunk_id(base + pos);
    uint64_t size = riff_u32(base + pos + 4);
    const uint64_t payload = pos + 8;
    const bool is_data = std::memcmp(base + pos, "data", 4) == 0;
    if (is_data && (size == kWavUnknownSize || (size == 0 && streamed))) size = end - payload;
    if (size > end - payload)
      return format_error(where + ": chunk '" + id + "' at offset " + std::to_string(pos) + " declares " +
                          std::to_string(size) + " bytes but only " + std::to_string(end - payload) +
                          " remain");
    if (std::memcmp(base + pos, "fmt ", 4) == 0) {
      if (fmt) return format_error(where + ": second fmt chunk at offset " + std::to_string(pos));
      GPS_ASSIGN(WavFormat f, parse_wav_fmt(base + payload, static_cast<uint32_t>(size), where));
      fmt = f;
    } else if (is_data) {
      if (data) return format_error(where + ": second data chunk at offset " + std::to_string(pos));
      data = base + payload;
      data_size = size;
    }
    // Odd-sized chunks are followed by a pad byte; a missing pad byte at the very end is tolerated.
    pos = payload + size + (size & 1);
  }
  if (!fmt) return format_error(where + ": no fmt chunk");
  if (!data) return format_error(where + ": no data chunk");
  if (data_size % fmt->block_align != 0)
    return format_error(where + ": data chunk size " + std::to_string(data_size) +
                        " is not a whole number of frames of " + std::to_string(fmt->block_align) + " bytes");

  WavAudio out;
  out.sample_rate = fmt->sample_rate;
  out.channels = fmt->channels;
  out.bits_per_sample = fmt->bits;
  out.format = fmt->kind;
  GPS_TRY(decode_wav_frames(data, data_size / fmt->block_align, *fmt, 0, where, out.samples));
  return out;
}

Result<WavAudio> read_wav_file(const std::string& path) {
  GPS_ASSIGN(auto file, MappedFile::open(path));
  return read_wav(file->bytes(), path);
}

}  // namespace gpstream::audio
