// read_audio_file: the magic decides the reader (RIFF/WAVE: ours; anything else: libsndfile), then
// libsndfile's frames are read in blocks, checked and averaged into mono. libsndfile's own float
// normalisation (on by default) divides integer samples by 2^(bits-1), the WAV reader's mapping.
#include "audio/audio_file.h"

#include <sndfile.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace gpstream::audio {
namespace {

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};

uint16_t codec_bits(int format) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
      return 8;
    case SF_FORMAT_PCM_16:
      return 16;
    case SF_FORMAT_PCM_24:
      return 24;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
      return 32;
    case SF_FORMAT_DOUBLE:
      return 64;
    default:
      return 0;
  }
}

Result<WavAudio> read_with_sndfile(const std::string& path) {
  SF_INFO info{};
  std::unique_ptr<SNDFILE, SndfileCloser> file(sf_open(path.c_str(), SFM_READ, &info));
  if (!file)
    return format_error(path + ": not an audio file libsndfile reads (" + sf_strerror(nullptr) + ")");
  if (info.channels <= 0 || info.channels > kWavMaxChannels)
    return format_error(path + ": " + std::to_string(info.channels) + " channels (supported: 1 to " +
                        std::to_string(kWavMaxChannels) + ")");
  GPS_TRY(check_sample_rate(info.samplerate > 0 ? static_cast<uint64_t>(info.samplerate) : 0, path));
  WavAudio out;
  out.sample_rate = static_cast<uint32_t>(info.samplerate);
  out.channels = static_cast<uint16_t>(info.channels);
  out.bits_per_sample = codec_bits(info.format);
  const int sub = info.format & SF_FORMAT_SUBMASK;
  out.format = (out.bits_per_sample == 0 || sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE)
                   ? WavSampleFormat::Float
                   : WavSampleFormat::Int;
  const size_t channels = static_cast<size_t>(info.channels);
  constexpr sf_count_t kBlock = 4096;
  std::vector<float> block(static_cast<size_t>(kBlock) * channels);
  for (;;) {
    const sf_count_t n = sf_readf_float(file.get(), block.data(), kBlock);
    if (n <= 0) break;
    if (out.samples.size() + static_cast<uint64_t>(n) > kAudioMaxFrames)
      return format_error(path + ": more than " + std::to_string(kAudioMaxFrames) + " frames of audio");
    for (sf_count_t i = 0; i < n; ++i) {
      const float* frame = block.data() + static_cast<size_t>(i) * channels;
      double sum = 0;
      for (size_t c = 0; c < channels; ++c) {
        if (!std::isfinite(frame[c]))
          return format_error(path + ": non-finite sample at frame " + std::to_string(out.samples.size()) +
                              ", channel " + std::to_string(c));
        sum += frame[c];
      }
      out.samples.push_back(static_cast<float>(sum / static_cast<double>(channels)));
    }
  }
  if (sf_error(file.get()) != SF_ERR_NO_ERROR)
    return format_error(path + ": decoding failed after " + std::to_string(out.samples.size()) + " frames (" +
                        sf_strerror(file.get()) + ")");
  return out;
}

}  // namespace

Result<WavAudio> read_audio_file(const std::string& path) {
  char magic[12] = {};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return io_error(path + ": cannot open (" + std::strerror(errno) + ")");
    in.read(magic, sizeof magic);
  }
  if (std::memcmp(magic, "RIFF", 4) == 0 && std::memcmp(magic + 8, "WAVE", 4) == 0)
    return read_wav_file(path);
  return read_with_sndfile(path);
}

}  // namespace gpstream::audio
