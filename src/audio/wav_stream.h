// Reading WAV audio as it arrives (a pipe from a recorder, stdin): bytes are pushed in whatever pieces the
// pipe delivers, and each push returns the mono samples of every frame it completed, so a consumer can
// transcribe while the recording goes on. Also headerless PCM (`raw`), where every byte is sample data.
// The stream is untrusted as read_wav() treats a file: the fmt chunk is checked the same way (audio/wav.h),
// nothing is buffered beyond one chunk header, the fmt payload or one partial frame, and every defect is an
// Error naming the stream. Unlike a file, a stream must give its fmt chunk before its data chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "audio/wav.h"
#include "util/error.h"

namespace gpstream::audio {

// Bytes of chunks other than fmt that may come before the data chunk (LIST, bext, JUNK padding...).
inline constexpr uint64_t kWavStreamMaxSkippedBytes = uint64_t{16} << 20;
// A fmt payload longer than this is corrupt (the standard ones have 16, 18 or 40 bytes).
inline constexpr uint32_t kWavStreamMaxFmtBytes = 4096;

class WavStream {
 public:
  // A RIFF/WAVE stream. Sizes: a data size of 0xFFFFFFFF, or 0 under a RIFF size of 0 or 0xFFFFFFFF (the
  // placeholders of a recorder that cannot seek back), means the data runs to the end of the stream (of the
  // RIFF form, when its size is known, as read_wav() reads it); any other data size is the most that is read
  // (after it the stream is done and later bytes are ignored). A stream that ends before a declared size
  // simply ends the audio: recorders writing to a pipe declare a size they may never reach (arecord
  // 0x7fffff00, sox about 0x7ffff000) and stop when interrupted.
  static WavStream wav(std::string name);
  // Headerless PCM of `format` (block_align = channels x bits / 8); the format is checked like a fmt chunk.
  static Result<WavStream> raw(WavSampleFormat kind, uint16_t bits, uint16_t channels, uint32_t sample_rate,
                               std::string name);

  // Consumes `bytes`; appends the mono samples of the frames they complete to `out`. After an error the
  // stream stays failed (every later call returns the error).
  Status push(std::span<const std::byte> bytes, std::vector<float>& out);
  // The end of the stream: an error when it ended inside the header or inside a frame.
  Status finish();

  bool has_format() const { return state_ == State::Data || state_ == State::Done; }
  const WavFormat& format() const { return format_; }  // valid once has_format()
  bool done() const { return state_ == State::Done; }  // the declared data size was read
  uint64_t frames() const { return frames_; }
  uint64_t bytes_pushed() const { return bytes_pushed_; }
  const std::string& name() const { return name_; }

 private:
  enum class State { RiffHeader, ChunkHeader, Fmt, Skip, Data, Done, Failed };
  explicit WavStream(std::string name) : name_(std::move(name)) {}
  Status fail(Error e);
  // Header bytes: gathers `need` bytes into pending_; true once they are all there.
  bool gather(const uint8_t*& p, const uint8_t* end, size_t need);
  Status on_chunk_header();
  Status decode_data(const uint8_t*& p, const uint8_t* end, std::vector<float>& out);

  std::string name_;
  State state_ = State::RiffHeader;
  Error error_{ErrorCode::Internal, ""};
  WavFormat format_;
  bool have_fmt_ = false;
  bool streamed_riff_ = false;    // RIFF size 0 or 0xFFFFFFFF
  uint64_t riff_end_ = 0;         // 8 + the RIFF size: where a known RIFF form ends
  std::vector<uint8_t> pending_;  // a partial header, fmt payload or frame
  uint64_t skip_left_ = 0;        // bytes of the chunk being skipped (its pad byte included)
  uint64_t skipped_ = 0;          // skipped so far, bounded by kWavStreamMaxSkippedBytes
  uint32_t fmt_size_ = 0;
  uint64_t data_left_ = 0;       // bytes of the data chunk still to read
  bool data_unbounded_ = false;  // the data runs to the end of the stream
  uint64_t frames_ = 0;
  uint64_t bytes_pushed_ = 0;
};

}  // namespace gpstream::audio
