// PCM frames → 16 kHz samples → encoder rows → one source unit per encoder chunk (audio_units.h).
#include "serve/audio_units.h"

#include "audio/log_mel.h"

namespace gpstream::serve {

Result<AudioUnits> AudioUnits::create(const speech_encoder::SpeechEncoderModel& model, uint32_t sample_rate) {
  auto resampler = audio::ResampleStream::create(sample_rate, audio::kLogMelSampleRate);
  if (!resampler) return invalid_argument("'sample_rate': " + resampler.error().message());
  if (model.config().n_mels != audio::kLogMelBins)
    return invalid_argument("the speech encoder takes " + std::to_string(model.config().n_mels) +
                            " mel bins, not " + std::to_string(audio::kLogMelBins));
  return AudioUnits(model, std::move(*resampler), sample_rate);
}

AudioUnits::AudioUnits(const speech_encoder::SpeechEncoderModel& model, audio::ResampleStream resampler,
                       uint32_t sample_rate)
    : model_(&model), sample_rate_(sample_rate), resampler_(std::move(resampler)), embeddings_(model) {}

double AudioUnits::row_ms() const {
  return 10.0 * static_cast<double>(model_->config().mel_frames_per_row());
}
double AudioUnits::chunk_ms() const {
  return 10.0 * static_cast<double>(model_->config().mel_frames_per_chunk());
}

void AudioUnits::cut(std::vector<AudioUnit>& out, bool last, size_t max_units) {
  const auto width = static_cast<size_t>(model_->config().llm_hidden);
  const auto per_chunk = static_cast<size_t>(model_->config().rows_per_chunk());
  size_t n_rows = rows_.size() / width, used = 0;
  for (size_t taken = 0; taken < max_units && (n_rows - used >= per_chunk || (last && n_rows > used));
       ++taken) {
    const size_t n = std::min(per_chunk, n_rows - used);
    AudioUnit u;
    u.rows.assign(rows_.begin() + static_cast<std::ptrdiff_t>(used * width),
                  rows_.begin() + static_cast<std::ptrdiff_t>((used + n) * width));
    u.n_rows = static_cast<int>(n);
    u.duration_ms = row_ms() * static_cast<double>(n);
    out.push_back(std::move(u));
    used += n;
  }
  rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(used * width));
}

void AudioUnits::push(std::span<const float> samples, std::vector<AudioUnit>& out) {
  samples_16k_.clear();
  resampler_.push(samples, samples_16k_);
  embeddings_.push(samples_16k_.data(), samples_16k_.size(), rows_);
  cut(out, false);
}

void AudioUnits::feed(std::span<const float> samples) {
  samples_16k_.clear();
  resampler_.push(samples, samples_16k_);
  embeddings_.feed(samples_16k_.data(), samples_16k_.size());
}

void AudioUnits::encode_ready(std::span<AudioUnits* const> streams) {
  std::vector<speech_encoder::SpeechEncoderStream*> encoders;
  std::vector<std::vector<float>*> outs;
  for (AudioUnits* a : streams) {
    encoders.push_back(&a->embeddings_.encoder());
    outs.push_back(&a->rows_);
  }
  speech_encoder::SpeechEncoderStream::run_ready_chunks(encoders, outs);
}

void AudioUnits::take_units(std::vector<AudioUnit>& out, size_t max_units) {
  cut(out, false, max_units);
}

void AudioUnits::finish(std::vector<AudioUnit>& out) {
  samples_16k_.clear();
  resampler_.finish(samples_16k_);
  embeddings_.push(samples_16k_.data(), samples_16k_.size(), rows_);
  embeddings_.finish(rows_);
  cut(out, true);
}

}  // namespace gpstream::serve
