// Fuzz target: a WAV file parsed from memory (RIFF chunk walk, fmt variants, sample decoding), then what the
// speech front end does with a file that reads: resampling all of its samples to 16 kHz and streaming log-mel
// extraction. The same bytes go through the incremental reader (audio/wav_stream.h) in three pieces: it must
// not crash, and when both readers accept the bytes they give the same samples.
// The resampler is also reached with whatever rate the fmt chunk declares, outside the readers' 8-192 kHz
// too: the file is read once more with that rate set to 16 kHz, and its samples are resampled from the
// declared rate. The resampler must then refuse (a bad rate, or an output over its bound or the memory
// budget, which this process sets to kFuzzBudget) or write exactly ceil(n L / M) samples within the budget.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "audio/log_mel.h"
#include "audio/resample.h"
#include "audio/wav.h"
#include "audio/wav_stream.h"

namespace {

namespace audio = gpstream::audio;

// The memory budget (GPSTREAM_MEMORY_LIMIT) of this process: well under libFuzzer's 2 GiB RSS limit, and
// small enough that the largest output it allows resamples in about a second under ASan.
constexpr const char* kFuzzBudgetText = "32M";
constexpr uint64_t kFuzzBudget = uint64_t{32} << 20;

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// Offset of the first fmt chunk's sample rate field, or 0 when the chunk walk finds none.
size_t fmt_rate_offset(const uint8_t* data, size_t size) {
  size_t pos = 12;
  while (pos + 8 <= size) {
    const uint64_t chunk = le32(data + pos + 4);
    if (std::memcmp(data + pos, "fmt ", 4) == 0) return chunk >= 16 && pos + 16 <= size ? pos + 12 : 0;
    pos += 8 + chunk + (chunk & 1);
  }
  return 0;
}

// Resamples the file's samples from the rate its header declares, whatever that rate is.
void resample_at_declared_rate(const uint8_t* data, size_t size) {
  const size_t at = fmt_rate_offset(data, size);
  if (at == 0) return;
  const uint32_t declared = le32(data + at);
  if (declared >= audio::kWavMinSampleRate && declared <= audio::kWavMaxSampleRate) return;  // as below
  std::vector<uint8_t> patched(data, data + size);
  const uint32_t rate = audio::kLogMelSampleRate;
  for (int i = 0; i < 4; ++i) patched[at + i] = static_cast<uint8_t>(rate >> (8 * i));
  auto wav = audio::read_wav({reinterpret_cast<const std::byte*>(patched.data()), size}, "fuzz.wav");
  if (!wav.ok()) return;
  auto out = audio::resample(wav->samples, declared, audio::kLogMelSampleRate);
  if (!out.ok()) return;
  if (out->size() * sizeof(float) > kFuzzBudget) std::abort();  // the budget was not checked
  const uint64_t n = wav->samples.size(), g = std::gcd<uint64_t>(declared, rate);
  const uint64_t up = rate / g, down = declared / g;
  if (out->size() != (n * up + down - 1) / down) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool budget_set = ::setenv("GPSTREAM_MEMORY_LIMIT", kFuzzBudgetText, 1) == 0;
  if (!budget_set) std::abort();
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto wav_stream = audio::WavStream::wav("fuzz.wav");
  std::vector<float> streamed;
  const size_t a = size / 3, b = 2 * size / 3;
  const bool stream_ok = wav_stream.push(bytes.subspan(0, a), streamed).ok() &&
                         wav_stream.push(bytes.subspan(a, b - a), streamed).ok() &&
                         wav_stream.push(bytes.subspan(b), streamed).ok() && wav_stream.finish().ok();
  resample_at_declared_rate(data, size);
  auto wav = audio::read_wav(bytes, "fuzz.wav");
  if (!wav.ok()) return 0;
  if (stream_ok && streamed != wav->samples) std::abort();
  for (float v : wav->samples)
    if (!std::isfinite(v)) std::abort();  // the reader promises finite samples
  // Every rate the reader accepts is a valid resampler rate, and at most doubles the sample count, which the
  // file's size bounds: all of the samples are resampled.
  auto mono16k = audio::resample(wav->samples, wav->sample_rate, audio::kLogMelSampleRate);
  if (!mono16k.ok()) std::abort();
  audio::LogMelStream stream;
  std::vector<float> frames;
  stream.push(mono16k->data(), mono16k->size(), frames);
  if (frames.size() != audio::log_mel_frame_count(mono16k->size()) * audio::kLogMelBins) std::abort();
  return 0;
}
