// SpeechTranscriber: samples → encoder chunks → Session, with SimulEval's speech delays.
#include "speech/speech_transcriber.h"

#include <span>

#include "audio/log_mel.h"
#include "util/clock.h"

namespace gpstream::speech {

Result<std::unique_ptr<SpeechTranscriber>> SpeechTranscriber::create(SpeechModel& model,
                                                                     stream::SessionOptions options) {
  if (!model.encoder || !model.llm.model || !model.llm.codec)
    return invalid_argument("speech transcriber: the speech model is not loaded");
  if (options.continuous)
    return invalid_argument(
        "speech transcriber: continuous sessions are not supported (one utterance per run)");
  if (model.encoder->config().n_mels != static_cast<int64_t>(audio::kLogMelBins))
    return invalid_argument("speech transcriber: the encoder takes " +
                            std::to_string(model.encoder->config().n_mels) +
                            " mel bins, the front end gives " + std::to_string(audio::kLogMelBins));
  std::unique_ptr<SpeechTranscriber> t(new SpeechTranscriber(model, std::move(options)));
  GPS_TRY(t->reset());
  return t;
}

SpeechTranscriber::SpeechTranscriber(SpeechModel& model, stream::SessionOptions options)
    : model_(model),
      options_(std::move(options)),
      embeddings_(*model.encoder, model.llm.model->n_threads()),
      rows_per_chunk_(model.encoder->config().rows_per_chunk()),
      chunk_samples_(model.encoder->config().mel_frames_per_chunk() *
                     static_cast<int64_t>(audio::kLogMelHop)),
      n_embd_(model.llm.model->config().n_embd) {}

Status SpeechTranscriber::reset() {
  GPS_ASSIGN(session_, stream::Session::create(*model_.llm.model, *model_.llm.codec, options_));
  embeddings_.reset();
  rows_.clear();
  words_.clear();
  samples_ = 0;
  chunks_pushed_ = 0;
  audio_ended_ = session_done_ = finished_ = false;
  compute_ms_ = 0;
  return {};
}

double SpeechTranscriber::now_ms() const {
  if (options_.clock) return options_.clock();
  return steady_ms();
}

double SpeechTranscriber::samples_ms(int64_t samples) const {
  // SimulEval's step_to_delay: samples × 1000 / sample_rate.
  return static_cast<double>(samples) * 1000.0 / static_cast<double>(audio::kLogMelSampleRate);
}

double SpeechTranscriber::audio_ms() const {
  return samples_ms(static_cast<int64_t>(samples_));
}

double SpeechTranscriber::chunk_ms() const {
  return samples_ms(chunk_samples_);
}

std::string SpeechTranscriber::transcript() const {
  std::string s;
  for (const auto& w : words_) s += (s.empty() ? "" : " ") + w.text;
  return s;
}

Status SpeechTranscriber::drain(std::vector<TranscribedWord>& out) {
  while (!session_done_) {
    GPS_ASSIGN(stream::Event e, session_->step());
    if (e.kind == stream::EventKind::NeedSource) return {};
    if (e.kind == stream::EventKind::Finished || e.kind == stream::EventKind::SegmentEnd) {
      session_done_ = true;
      break;
    }
    if (e.kind != stream::EventKind::Word) continue;
    TranscribedWord w;
    w.text = std::move(e.word);
    w.chunks = e.delay;
    // Audio is read one chunk-long segment at a time: j chunks read = j segments consumed; once the audio
    // has ended and every chunk was read, the last (shorter) segment was consumed too: the whole audio.
    const bool all_read = audio_ended_ && e.delay >= chunks_pushed_;
    w.delay_ms = all_read ? audio_ms() : samples_ms(static_cast<int64_t>(e.delay) * chunk_samples_);
    w.elapsed_ms = w.delay_ms + compute_before_ + (now_ms() - call_start_);
    words_.push_back(w);
    out.push_back(std::move(w));
  }
  return {};
}

Status SpeechTranscriber::push_chunk(size_t n_rows, double duration_ms, std::vector<TranscribedWord>& out) {
  const size_t n_floats = n_rows * static_cast<size_t>(n_embd_);
  GPS_TRY(
      session_->push_source_embeddings(std::span<const float>(rows_.data(), n_floats), n_embd_, duration_ms));
  rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(n_floats));
  ++chunks_pushed_;
  return drain(out);
}

Status SpeechTranscriber::push_ready_chunks(std::vector<TranscribedWord>& out) {
  const size_t chunk_floats = static_cast<size_t>(rows_per_chunk_) * static_cast<size_t>(n_embd_);
  while (!session_done_ && rows_.size() >= chunk_floats)
    GPS_TRY(push_chunk(static_cast<size_t>(rows_per_chunk_), chunk_ms(), out));
  return {};
}

Status SpeechTranscriber::push(const float* samples, size_t n, std::vector<TranscribedWord>& out) {
  if (audio_ended_) return invalid_argument("speech transcriber: push after finish (reset first)");
  call_start_ = now_ms();
  compute_before_ = compute_ms_;
  samples_ += n;
  Status st;
  if (!session_done_ && n > 0) {
    embeddings_.push(samples, n, rows_);
    st = push_ready_chunks(out);
  }
  compute_ms_ = compute_before_ + (now_ms() - call_start_);
  return st;
}

Status SpeechTranscriber::finish(std::vector<TranscribedWord>& out) {
  if (audio_ended_) return invalid_argument("speech transcriber: finish called twice (reset first)");
  call_start_ = now_ms();
  compute_before_ = compute_ms_;
  audio_ended_ = true;
  Status st = [&]() -> Status {
    if (session_done_) return {};
    embeddings_.finish(rows_);
    GPS_TRY(push_ready_chunks(out));
    if (session_done_) return {};
    const size_t n_rows = rows_.size() / static_cast<size_t>(n_embd_);
    if (n_rows > 0) {  // the partial last chunk: the rest of the audio
      const double rest_ms = audio_ms() - static_cast<double>(chunks_pushed_) * chunk_ms();
      GPS_TRY(push_chunk(n_rows, rest_ms > 0 ? rest_ms : 0.0, out));
      if (session_done_) return {};
    }
    GPS_TRY(session_->end_source());
    return drain(out);
  }();
  finished_ = true;
  compute_ms_ = compute_before_ + (now_ms() - call_start_);
  return st;
}

}  // namespace gpstream::speech
