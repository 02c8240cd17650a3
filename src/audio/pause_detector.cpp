// Pause detection by frame level (see pause_detector.h).
#include "audio/pause_detector.h"

#include <cmath>
#include <limits>

namespace gpstream::audio {
namespace {

size_t frames_of(double ms) {
  return static_cast<size_t>(std::ceil(ms / 10.0 - 1e-9));
}

}  // namespace

PauseDetector::PauseDetector(PauseOptions options)
    : options_(options),
      pause_frames_(frames_of(options.pause_ms)),
      short_pause_frames_(frames_of(options.short_pause_ms)),
      min_frames_(frames_of(options.min_segment_ms)),
      max_frames_(frames_of(options.max_segment_ms)),
      hard_frames_(frames_of(options.max_segment_ms * 1.5)),
      lead_frames_(frames_of(options.lead_ms)) {}

double PauseDetector::level_dbfs(const float* samples, size_t n) {
  if (n == 0) return -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(samples[i]) * samples[i];
  const double ms = sum / static_cast<double>(n);
  return ms > 0 ? 10.0 * std::log10(ms) : -std::numeric_limits<double>::infinity();
}

FrameAction PauseDetector::frame(const float* samples, size_t n) {
  const bool quiet = level_dbfs(samples, n) < options_.quiet_dbfs;
  const uint64_t first = samples_;
  samples_ += n;
  if (!in_segment_) {
    if (quiet) {
      if (lead_frames_ == 0) return FrameAction::Skip;
      lead_.emplace_back(samples, samples + n);
      if (lead_.size() > lead_frames_) lead_.pop_front();
      return FrameAction::Hold;
    }
    in_segment_ = true;
    uint64_t lead_samples = 0;
    for (const auto& f : lead_) lead_samples += f.size();
    segment_start_ = first - lead_samples;
    segment_frames_ = lead_.size() + 1;
    quiet_run_ = 0;
    return FrameAction::StartSegment;
  }
  ++segment_frames_;
  quiet_run_ = quiet ? quiet_run_ + 1 : 0;
  const bool pause = segment_frames_ >= min_frames_ && quiet_run_ >= pause_frames_;
  const bool gap = segment_frames_ >= max_frames_ && quiet_run_ >= short_pause_frames_;
  if (pause || gap || segment_frames_ >= hard_frames_) {
    in_segment_ = false;
    segment_start_ = samples_;
    lead_.clear();  // a lead not taken belongs to the segment that just ended
    return FrameAction::EndSegment;
  }
  return FrameAction::Continue;
}

std::vector<float> PauseDetector::take_lead() {
  std::vector<float> out;
  for (const auto& f : lead_) out.insert(out.end(), f.begin(), f.end());
  lead_.clear();
  return out;
}

}  // namespace gpstream::audio
