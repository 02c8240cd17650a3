// One audio stream's input on the server: samples of binary WebSocket frames (decoded by stream_protocol.h),
// resampled to 16 kHz when the stream's rate differs (audio::ResampleStream, exact across frames), turned
// into encoder rows (speech_encoder::SpeechEmbeddingStream), and cut into source units: one unit per encoder
// chunk (rows_per_chunk rows, chunk_ms of audio), the last one possibly shorter (its rows × the ms per row).
// With segmentation at pauses (continuous streams: audio of any length), the 16 kHz samples first go through
// an audio::PauseDetector: a segment's last unit says so (ends_segment; a unit with no rows when its rows
// were all given out already), the encoder starts afresh for the next segment, and quiet stretches between
// segments are skipped — never encoded, their duration added to the next unit's, so summed durations stay
// the audio's time. The same cuts as speech::SegmentedTranscriber (transcribe).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "audio/pause_detector.h"
#include "audio/resample_stream.h"
#include "speech_encoder/speech_embedding_stream.h"
#include "util/error.h"

namespace gpstream::serve {

// A source unit: the rows of one encoder chunk (llm_hidden floats each) and the audio they cover.
struct AudioUnit {
  std::vector<float> rows;
  int n_rows = 0;
  double duration_ms = 0;
  bool ends_segment = false;  // the last unit of a segment cut at a pause (its Session segment ends here)
};

class AudioUnits {
 public:
  // The model must outlive this object; sample_rate as for audio::resample (checked by create).
  // segment_at_pauses: cut the audio at pauses (above); without it the whole stream is one utterance.
  static Result<AudioUnits> create(const speech_encoder::SpeechEncoderModel& model, uint32_t sample_rate,
                                   bool segment_at_pauses = false);

  // Samples at the stream's rate → the units they complete, appended to `out`.
  void push(std::span<const float> samples, std::vector<AudioUnit>& out);
  // End of the audio: the partial last chunk, if it has rows.
  void finish(std::vector<AudioUnit>& out);

  // push() in two phases, so that many streams' encoder chunks run as one stacked pass (serve's engine):
  // feed() resamples and runs the encoder's front end; encode_ready() runs the ready chunks of all the given
  // streams through the encoder's Transformer together (speech_encoder::SpeechEncoderStream::
  // run_ready_chunks); take_units() then cuts at most max_units of the completed units. push() is the three
  // on one stream. Units not taken stay for the next take_units(), push() or finish().
  void feed(std::span<const float> samples);
  // Encoder chunks ready for the Transformer (complete chunks since the last encode).
  int64_t chunks_ready() { return embeddings_.encoder().chunks_ready(); }
  static void encode_ready(std::span<AudioUnits* const> streams);
  void take_units(std::vector<AudioUnit>& out, size_t max_units);

  // Audio per full chunk and per row, in ms.
  double chunk_ms() const;
  double row_ms() const;
  // The rate of the samples push() takes.
  uint32_t sample_rate() const { return sample_rate_; }

 private:
  AudioUnits(const speech_encoder::SpeechEncoderModel& model, audio::ResampleStream resampler,
             uint32_t sample_rate, bool segment_at_pauses);
  void cut(std::vector<AudioUnit>& out, bool last, size_t max_units = SIZE_MAX);
  // Segmentation: judges the pending 16 kHz samples frame by frame and feeds the open segment's to the
  // encoder's front end, stopping after a segment's last frame (closing_) until close_segment().
  void advance();
  void feed_encoder(const float* samples, size_t n);
  // A segment's first frame is next: the skipped time is counted and the detector's lead fed.
  void start_segment();
  // The closing segment's partial chunk (encoded alone), its end marked on the last unit; a fresh encoder.
  void close_segment(std::vector<AudioUnit>& out);

  const speech_encoder::SpeechEncoderModel* model_;
  uint32_t sample_rate_ = 0;
  audio::ResampleStream resampler_;
  speech_encoder::SpeechEmbeddingStream embeddings_;
  std::vector<float> samples_16k_, rows_;
  bool segment_at_pauses_ = false;
  audio::PauseDetector pauses_;
  std::vector<float> pending_;  // 16 kHz samples not yet judged (segmentation)
  bool segment_open_ = false;   // frames of a segment went to the encoder since the last close
  bool closing_ = false;        // the open segment's last frame was fed; no more until it is closed
  uint64_t fed_samples_ = 0;    // 16 kHz samples fed to the encoder or skipped, in stream order
  double skipped_ms_ = 0;       // quiet audio skipped since the last unit, added to the next one's duration
};

}  // namespace gpstream::serve
