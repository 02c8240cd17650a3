// Incremental WAV reader: a small state machine over the RIFF layout (RIFF header, chunk headers, the fmt
// payload, skipped chunks, then the data chunk's frames). Header pieces and a partial frame wait in pending_,
// which never holds more than kWavStreamMaxFmtBytes; skipped chunks are counted, not stored.
#include "audio/wav_stream.h"

#include <algorithm>
#include <cstring>

#include "audio/riff_bytes.h"

namespace gpstream::audio {

WavStream WavStream::wav(std::string name) {
  return WavStream(name.empty() ? "<stream>" : std::move(name));
}

Result<WavStream> WavStream::raw(WavSampleFormat kind, uint16_t bits, uint16_t channels, uint32_t sample_rate,
                                 std::string name) {
  WavStream s(name.empty() ? "<stream>" : std::move(name));
  // The same checks as a fmt chunk: build one (PCM or IEEE float tag, block align from the sizes).
  const uint16_t align = static_cast<uint16_t>(std::min<uint32_t>(0xFFFF, uint32_t{channels} * (bits / 8u)));
  uint8_t fmt[16] = {};
  const uint16_t tag = kind == WavSampleFormat::Float ? 3 : 1;
  auto put16 = [&](int at, uint16_t v) { fmt[at] = v & 0xff, fmt[at + 1] = static_cast<uint8_t>(v >> 8); };
  put16(0, tag);
  put16(2, channels);
  for (int i = 0; i < 4; ++i) fmt[4 + i] = static_cast<uint8_t>(sample_rate >> (8 * i));
  put16(12, align);
  put16(14, bits);
  GPS_ASSIGN(s.format_, parse_wav_fmt(fmt, sizeof fmt, s.name_));
  s.have_fmt_ = true;
  s.state_ = State::Data;
  s.data_unbounded_ = true;
  return s;
}

Status WavStream::fail(Error e) {
  state_ = State::Failed;
  error_ = e;
  return e;
}

bool WavStream::gather(const uint8_t*& p, const uint8_t* end, size_t need) {
  const size_t take = std::min(need - pending_.size(), static_cast<size_t>(end - p));
  pending_.insert(pending_.end(), p, p + take);
  p += take;
  return pending_.size() == need;
}

Status WavStream::on_chunk_header() {
  const uint8_t* h = pending_.data();
  const uint32_t size = riff_u32(h + 4);
  const std::string id = riff_chunk_id(h);
  const std::string at = name_ + ": chunk '" + id + "' at byte " + std::to_string(bytes_pushed_ - 8);
  if (std::memcmp(h, "fmt ", 4) == 0) {
    if (have_fmt_) return format_error(at + ": a second fmt chunk");
    if (size > kWavStreamMaxFmtBytes)
      return format_error(at + " declares " + std::to_string(size) + " bytes (a fmt chunk has at most " +
                          std::to_string(kWavStreamMaxFmtBytes) + ")");
    fmt_size_ = size;
    state_ = State::Fmt;
  } else if (std::memcmp(h, "data", 4) == 0) {
    if (!have_fmt_)
      return format_error(at + ": the data chunk comes before the fmt chunk (a stream must give fmt first)");
    data_unbounded_ = size == kWavUnknownSize || (size == 0 && streamed_riff_);
    data_left_ = size;
    if (data_unbounded_ && !streamed_riff_) {  // an unknown data size inside a known RIFF form: to its end
      data_unbounded_ = false;
      data_left_ = riff_end_ > bytes_pushed_ ? riff_end_ - bytes_pushed_ : 0;
    }
    state_ = data_unbounded_ || data_left_ > 0 ? State::Data : State::Done;
  } else {
    skip_left_ = uint64_t{size} + (size & 1);
    if (skipped_ + skip_left_ > kWavStreamMaxSkippedBytes)
      return format_error(at + " declares " + std::to_string(size) + " bytes: more than " +
                          std::to_string(kWavStreamMaxSkippedBytes) +
                          " bytes of other chunks before the data");
    skipped_ += skip_left_;
    state_ = State::Skip;
  }
  pending_.clear();
  return {};
}

Status WavStream::decode_data(const uint8_t*& p, const uint8_t* end, std::vector<float>& out) {
  const size_t align = format_.block_align;
  uint64_t avail = static_cast<uint64_t>(end - p);
  if (!data_unbounded_) avail = std::min(avail, data_left_);
  const uint8_t* stop = p + avail;
  if (!pending_.empty() && gather(p, stop, align)) {  // the partial frame of the last push, completed
    GPS_TRY(decode_wav_frames(pending_.data(), 1, format_, frames_, name_, out));
    ++frames_;
    pending_.clear();
  }
  if (pending_.empty()) {
    const uint64_t whole = static_cast<uint64_t>(stop - p) / align;
    GPS_TRY(decode_wav_frames(p, whole, format_, frames_, name_, out));
    frames_ += whole;
    p += whole * align;
    pending_.assign(p, stop);
  }
  p = stop;
  if (!data_unbounded_) {
    data_left_ -= avail;
    if (data_left_ == 0) {
      if (!pending_.empty())
        return format_error(name_ + ": the data chunk ends inside a frame (" +
                            std::to_string(pending_.size()) + " of " + std::to_string(align) + " bytes)");
      state_ = State::Done;
    }
  }
  return {};
}

Status WavStream::push(std::span<const std::byte> bytes, std::vector<float>& out) {
  if (state_ == State::Failed) return error_;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  while (p < end && state_ != State::Done) {
    const uint8_t* before = p;
    Status st;
    switch (state_) {
      case State::RiffHeader:
        if (gather(p, end, 12)) {
          const uint8_t* h = pending_.data();
          if (std::memcmp(h, "RIFX", 4) == 0) {
            st = unsupported(name_ + ": big-endian RIFX streams are not supported");
          } else if (std::memcmp(h, "RF64", 4) == 0 || std::memcmp(h, "BW64", 4) == 0) {
            st = unsupported(name_ + ": RF64/BW64 (64-bit WAV) streams are not supported");
          } else if (std::memcmp(h, "RIFF", 4) != 0) {
            st = format_error(name_ + ": not a RIFF/WAVE stream (no 'RIFF' magic)");
          } else if (std::memcmp(h + 8, "WAVE", 4) != 0) {
            st = format_error(name_ + ": RIFF stream is not WAVE (no 'WAVE' form)");
          } else {
            const uint32_t riff = riff_u32(h + 4);
            streamed_riff_ = riff == 0 || riff == kWavUnknownSize;
            riff_end_ = uint64_t{riff} + 8;
            if (!streamed_riff_ && riff < 4)
              st = format_error(name_ + ": RIFF size " + std::to_string(riff) + " is too small");
            pending_.clear();
            state_ = State::ChunkHeader;
          }
        }
        break;
      case State::ChunkHeader:
        if (gather(p, end, 8)) {
          bytes_pushed_ += static_cast<uint64_t>(p - before);
          before = p;
          st = on_chunk_header();
        }
        break;
      case State::Fmt:
        if (gather(p, end, fmt_size_)) {
          auto f = parse_wav_fmt(pending_.data(), fmt_size_, name_);
          if (!f.ok()) {
            st = f.error();
          } else {
            format_ = *f;
            have_fmt_ = true;
            pending_.clear();
            skip_left_ = fmt_size_ & 1;  // its pad byte
            state_ = skip_left_ ? State::Skip : State::ChunkHeader;
          }
        }
        break;
      case State::Skip: {
        const uint64_t take = std::min<uint64_t>(skip_left_, static_cast<uint64_t>(end - p));
        p += take;
        skip_left_ -= take;
        if (skip_left_ == 0) state_ = State::ChunkHeader;
        break;
      }
      case State::Data:
        st = decode_data(p, end, out);
        break;
      case State::Done:
      case State::Failed:
        break;
    }
    bytes_pushed_ += static_cast<uint64_t>(p - before);
    if (!st.ok()) return fail(st.error());
  }
  return {};
}

Status WavStream::finish() {
  if (state_ == State::Failed) return error_;
  if (state_ == State::Data) {
    if (!pending_.empty())
      return fail(format_error(name_ + ": the stream ends inside a frame (" +
                               std::to_string(pending_.size()) + " of " +
                               std::to_string(format_.block_align) + " bytes)"));
    state_ = State::Done;
    return {};
  }
  if (state_ == State::Done) return {};
  if (bytes_pushed_ == 0) return fail(format_error(name_ + ": empty stream (no WAV header)"));
  const char* where = state_ == State::Fmt ? "inside the fmt chunk" : "before the data chunk";
  return fail(format_error(name_ + ": the stream ends " + std::string(where) + " after " +
                           std::to_string(bytes_pushed_) + " bytes (truncated header)"));
}

}  // namespace gpstream::audio
