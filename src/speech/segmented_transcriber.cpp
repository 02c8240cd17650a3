// SegmentedTranscriber: pause-cut segments, each one SpeechTranscriber utterance (see
// segmented_transcriber.h).
#include "speech/segmented_transcriber.h"

#include <algorithm>

#include "audio/log_mel.h"

namespace gpstream::speech {
namespace {

double samples_to_ms(uint64_t samples) {
  return static_cast<double>(samples) * 1000.0 / static_cast<double>(audio::kLogMelSampleRate);
}

}  // namespace

Result<std::unique_ptr<SegmentedTranscriber>> SegmentedTranscriber::create(SpeechModel& model,
                                                                           stream::SessionOptions options,
                                                                           audio::PauseOptions pauses) {
  GPS_ASSIGN(auto inner, SpeechTranscriber::create(model, std::move(options)));
  return std::unique_ptr<SegmentedTranscriber>(new SegmentedTranscriber(std::move(inner), pauses));
}

SegmentedTranscriber::SegmentedTranscriber(std::unique_ptr<SpeechTranscriber> inner,
                                           audio::PauseOptions pauses)
    : inner_(std::move(inner)), pauses_(pauses), detector_(pauses) {}

Status SegmentedTranscriber::reset() {
  GPS_TRY(inner_->reset());
  detector_ = audio::PauseDetector(pauses_);
  partial_.clear();
  open_ = false;
  segment_start_ms_ = 0;
  segments_ = 0;
  words_.clear();
  return {};
}

double SegmentedTranscriber::audio_ms() const {
  return samples_to_ms(detector_.samples() + partial_.size());
}

std::string SegmentedTranscriber::transcript() const {
  std::string s;
  for (const auto& w : words_) s += (s.empty() ? "" : " ") + w.text;
  return s;
}

void SegmentedTranscriber::shift_and_append(std::vector<TranscribedWord>& words,
                                            std::vector<TranscribedWord>& out) {
  for (auto& w : words) {
    w.delay_ms += segment_start_ms_;
    w.elapsed_ms += segment_start_ms_;
    words_.push_back(w);
    out.push_back(w);
  }
  words.clear();
}

Status SegmentedTranscriber::push_inner(const float* samples, size_t n, std::vector<TranscribedWord>& out) {
  GPS_TRY(inner_->push(samples, n, scratch_));
  shift_and_append(scratch_, out);
  return {};
}

Status SegmentedTranscriber::end_segment(std::vector<TranscribedWord>& out) {
  GPS_TRY(inner_->finish(scratch_));
  shift_and_append(scratch_, out);
  GPS_TRY(inner_->reset());
  open_ = false;
  return {};
}

Status SegmentedTranscriber::frame(const float* samples, size_t n, std::vector<TranscribedWord>& out) {
  switch (detector_.frame(samples, n)) {
    case audio::FrameAction::Skip:
    case audio::FrameAction::Hold:
      return {};
    case audio::FrameAction::StartSegment: {
      open_ = true;
      ++segments_;
      segment_start_ms_ = samples_to_ms(detector_.segment_start());
      const std::vector<float> lead = detector_.take_lead();
      if (!lead.empty()) GPS_TRY(push_inner(lead.data(), lead.size(), out));
      return push_inner(samples, n, out);
    }
    case audio::FrameAction::Continue:
      return push_inner(samples, n, out);
    case audio::FrameAction::EndSegment:
      GPS_TRY(push_inner(samples, n, out));
      return end_segment(out);
  }
  return {};
}

Status SegmentedTranscriber::push(const float* samples, size_t n, std::vector<TranscribedWord>& out) {
  constexpr size_t kFrame = audio::PauseDetector::kFrameSamples;
  size_t i = 0;
  if (!partial_.empty()) {
    const size_t take = std::min(n, kFrame - partial_.size());
    partial_.insert(partial_.end(), samples, samples + take);
    i = take;
    if (partial_.size() < kFrame) return {};
    GPS_TRY(frame(partial_.data(), partial_.size(), out));
    partial_.clear();
  }
  for (; i + kFrame <= n; i += kFrame) GPS_TRY(frame(samples + i, kFrame, out));
  partial_.assign(samples + i, samples + n);
  return {};
}

Status SegmentedTranscriber::finish(std::vector<TranscribedWord>& out) {
  if (!partial_.empty()) {
    GPS_TRY(frame(partial_.data(), partial_.size(), out));
    partial_.clear();
  }
  if (open_) GPS_TRY(end_segment(out));
  return {};
}

}  // namespace gpstream::speech
