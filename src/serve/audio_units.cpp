// PCM frames → 16 kHz samples → encoder rows → one source unit per encoder chunk (audio_units.h).
#include "serve/audio_units.h"

#include "audio/log_mel.h"

namespace gpstream::serve {

Result<AudioUnits> AudioUnits::create(const speech_encoder::SpeechEncoderModel& model, uint32_t sample_rate,
                                      bool segment_at_pauses) {
  auto resampler = audio::ResampleStream::create(sample_rate, audio::kLogMelSampleRate);
  if (!resampler) return invalid_argument("'sample_rate': " + resampler.error().message());
  if (model.config().n_mels != audio::kLogMelBins)
    return invalid_argument("the speech encoder takes " + std::to_string(model.config().n_mels) +
                            " mel bins, not " + std::to_string(audio::kLogMelBins));
  return AudioUnits(model, std::move(*resampler), sample_rate, segment_at_pauses);
}

AudioUnits::AudioUnits(const speech_encoder::SpeechEncoderModel& model, audio::ResampleStream resampler,
                       uint32_t sample_rate, bool segment_at_pauses)
    : model_(&model),
      sample_rate_(sample_rate),
      resampler_(std::move(resampler)),
      embeddings_(model),
      segment_at_pauses_(segment_at_pauses) {}

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
    u.duration_ms = row_ms() * static_cast<double>(n) + skipped_ms_;
    skipped_ms_ = 0;
    out.push_back(std::move(u));
    used += n;
  }
  rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(used * width));
}

void AudioUnits::feed_encoder(const float* samples, size_t n) {
  embeddings_.feed(samples, n);
  fed_samples_ += n;
}

void AudioUnits::start_segment() {
  // The quiet audio since the last fed sample, up to the lead that is fed now, was skipped.
  skipped_ms_ += static_cast<double>(pauses_.segment_start() - fed_samples_) * 1000.0 /
                 static_cast<double>(audio::kLogMelSampleRate);
  fed_samples_ = pauses_.segment_start();
  const std::vector<float> lead = pauses_.take_lead();
  if (!lead.empty()) feed_encoder(lead.data(), lead.size());
  segment_open_ = true;
}

void AudioUnits::advance() {
  constexpr size_t kFrame = audio::PauseDetector::kFrameSamples;
  size_t i = 0;
  for (; !closing_ && pending_.size() - i >= kFrame; i += kFrame) {
    const float* f = pending_.data() + i;
    switch (pauses_.frame(f, kFrame)) {
      case audio::FrameAction::Skip:
      case audio::FrameAction::Hold:
        break;
      case audio::FrameAction::StartSegment:
        start_segment();
        feed_encoder(f, kFrame);
        break;
      case audio::FrameAction::Continue:
        feed_encoder(f, kFrame);
        break;
      case audio::FrameAction::EndSegment:
        feed_encoder(f, kFrame);
        closing_ = true;
        break;
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(i));
}

void AudioUnits::close_segment(std::vector<AudioUnit>& out) {
  const size_t before = out.size();
  embeddings_.finish(rows_);
  cut(out, true);
  if (out.size() > before) {
    out.back().ends_segment = true;
  } else {
    AudioUnit marker;  // every row was given out already: a unit with none carries the end
    marker.ends_segment = true;
    out.push_back(std::move(marker));
  }
  embeddings_.reset();
  closing_ = false;
  segment_open_ = false;
}

void AudioUnits::push(std::span<const float> samples, std::vector<AudioUnit>& out) {
  if (!segment_at_pauses_) {
    samples_16k_.clear();
    resampler_.push(samples, samples_16k_);
    embeddings_.push(samples_16k_.data(), samples_16k_.size(), rows_);
    cut(out, false);
    return;
  }
  feed(samples);
  AudioUnits* self = this;
  encode_ready(std::span<AudioUnits* const>(&self, 1));
  take_units(out, SIZE_MAX);
}

void AudioUnits::feed(std::span<const float> samples) {
  samples_16k_.clear();
  resampler_.push(samples, samples_16k_);
  if (!segment_at_pauses_) {
    embeddings_.feed(samples_16k_.data(), samples_16k_.size());
    return;
  }
  pending_.insert(pending_.end(), samples_16k_.begin(), samples_16k_.end());
  advance();
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
  // A closing segment whose whole chunks are all encoded and taken (none left for a later call) ends now,
  // its partial last chunk and end marker beyond max_units; the samples after it start the next segment
  // (their chunks are encoded in a later round).
  const auto width = static_cast<size_t>(model_->config().llm_hidden);
  const auto per_chunk = static_cast<size_t>(model_->config().rows_per_chunk());
  if (closing_ && embeddings_.encoder().chunks_ready() == 0 && rows_.size() / width < per_chunk) {
    close_segment(out);
    advance();
  }
}

void AudioUnits::finish(std::vector<AudioUnit>& out) {
  samples_16k_.clear();
  resampler_.finish(samples_16k_);
  if (!segment_at_pauses_) {
    embeddings_.push(samples_16k_.data(), samples_16k_.size(), rows_);
    embeddings_.finish(rows_);
    cut(out, true);
    return;
  }
  pending_.insert(pending_.end(), samples_16k_.begin(), samples_16k_.end());
  for (advance(); closing_; advance()) close_segment(out);  // finish() encodes what is ready, then the rest
  // The last partial frame: judged like any other; an open segment takes it and ends with the audio.
  if (!pending_.empty()) {
    const audio::FrameAction a = pauses_.frame(pending_.data(), pending_.size());
    if (a == audio::FrameAction::StartSegment) start_segment();
    if (segment_open_) feed_encoder(pending_.data(), pending_.size());
    pending_.clear();
  }
  if (segment_open_) {
    embeddings_.finish(rows_);
    cut(out, true);
    segment_open_ = false;
  }
}

}  // namespace gpstream::serve
