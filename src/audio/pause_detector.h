// Pause detection for audio of any length: where a continuous recording may be cut into utterances. The
// 16 kHz signal is judged in 10 ms frames by their RMS level (dBFS: 20·log10(rms), full scale 1.0): a frame
// below quiet_dbfs is quiet. A segment (an utterance to transcribe or translate on its own) starts at the
// first loud frame after a cut, with up to lead_ms of the quiet frames just before it (none by default: the
// shipped speech model writes spurious words, "(" most often, after a lead of silence; docs/speech.md), and
// ends
//   - after pause_ms of quiet frames in a row, once it holds at least min_segment_ms of audio;
//   - past max_segment_ms, after short_pause_ms of quiet (the gap between two words);
//   - at 1.5 × max_segment_ms whatever the signal (a recording with no pause at all stays bounded).
// Quiet frames between segments, beyond the lead, are skipped: they are counted in time, never buffered,
// so hours of silence take no memory. The decision depends only on the samples, not on how they are split
// into push() calls. Used by speech::SegmentedTranscriber (transcribe) and the server's audio streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gpstream::audio {

struct PauseOptions {
  double quiet_dbfs = -40.0;
  double pause_ms = 500.0;
  double min_segment_ms = 1000.0;
  double max_segment_ms = 20000.0;
  double short_pause_ms = 100.0;
  double lead_ms = 0.0;
};

// What to do with one frame's samples.
enum class FrameAction {
  Skip,          // quiet, between segments, beyond the lead: counted in time only
  Hold,          // quiet, between segments: kept as the lead of a segment that may start (see take_lead)
  StartSegment,  // the first loud frame of a segment: take_lead() first, then this frame
  Continue,      // part of the open segment
  EndSegment,    // the open segment's last frame: it ends after this one
};

class PauseDetector {
 public:
  static constexpr size_t kFrameSamples = 160;  // 10 ms at 16 kHz

  explicit PauseDetector(PauseOptions options = {});
  // One 10 ms frame (kFrameSamples samples; the last frame of a signal may be shorter).
  FrameAction frame(const float* samples, size_t n);
  // After StartSegment: the held lead frames' samples, oldest first (segment_start() is where they begin).
  // Clears the lead.
  std::vector<float> take_lead();
  bool in_segment() const { return in_segment_; }
  // Samples judged so far.
  uint64_t samples() const { return samples_; }
  // The sample index at which the open (or the next) segment started: its lead included.
  uint64_t segment_start() const { return segment_start_; }
  const PauseOptions& options() const { return options_; }
  // The RMS level of a frame in dBFS (−infinity for digital silence).
  static double level_dbfs(const float* samples, size_t n);

 private:
  PauseOptions options_;
  size_t pause_frames_, short_pause_frames_, min_frames_, max_frames_, hard_frames_, lead_frames_;
  bool in_segment_ = false;
  size_t segment_frames_ = 0;  // frames in the open segment (its lead included)
  size_t quiet_run_ = 0;       // quiet frames in a row at the open segment's end
  std::deque<std::vector<float>> lead_;
  uint64_t samples_ = 0;
  uint64_t segment_start_ = 0;
};

}  // namespace gpstream::audio
