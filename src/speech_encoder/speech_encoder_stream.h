// Streaming speech encoder: log-mel frames go in as they arrive, projected embedding rows come out chunk by
// chunk. State: the convolutions' left context (the last input rows of each), the encoder frames of the
// chunk being filled, a key/value cache per Transformer layer (trimmed to `left_chunks` chunks when
// the config bounds the left context) and, with the convolution module, its last K - 1 input rows per layer.
// A chunk of chunk_frames encoder frames (4 log-mel frames each) is run through the Transformer as soon as
// its last frame exists: no look-ahead beyond the chunk. finish() runs the partial last chunk. The rows equal
// SpeechEncoderPass::forward over the whole utterance (within float rounding: the products are summed in
// another order) for any chunking of the input.
// Several streams of one model can share the Transformer: feed() runs only the front end (the subsampling
// convolutions), and run_ready_chunks() takes the ready chunks of many streams through the Transformer in one
// stacked pass (the server's engine: one pass per round over all audio streams).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "speech_encoder/speech_encoder_params.h"

namespace gpstream::speech_encoder {

class SpeechEncoderStream {
 public:
  explicit SpeechEncoderStream(const SpeechEncoderModel& model, int n_threads = 1);

  // Consumes n_frames log-mel frames (n_mels floats each); appends every completed output row (llm_hidden
  // floats) to `out` and returns how many rows were appended. Not after finish() (reset() first).
  size_t push(const float* mel, size_t n_frames, std::vector<float>& out);
  // End of the utterance: runs the partial last chunk (its trailing partial stack is dropped, as in the
  // whole-utterance forward); returns rows appended. A trailing partial conv window is never emitted.
  size_t finish(std::vector<float>& out);
  // Starts a new utterance (the model and buffers are kept).
  void reset();

  // Two phases, push() and finish() split: feed() consumes log-mel frames through the front end only (the
  // encoder frames wait, no Transformer); end_input() marks the end of the utterance (the partial last chunk
  // becomes ready; no feed(), push() or finish() after it, reset() first). push() is feed() then
  // run_ready_chunks() on this stream alone, finish() is end_input() then the same.
  void feed(const float* mel, size_t n_frames);
  void end_input();
  // Chunks ready for the Transformer: the complete ones waiting, and after end_input() the partial last one.
  int64_t chunks_ready() const;
  // Runs up to max_chunks_each ready chunks of every stream, oldest first, one stacked pass per chunk round:
  // every linear layer is one matrix product over the rows of all the streams' chunks; attention (against
  // each stream's own key/value cache), RoPE positions and the convolution module's history stay per stream.
  // Appends stream i's rows to *outs[i] (as push() would) and returns the rows appended in all. The streams
  // are distinct and share one model; the pass uses streams[0]'s thread count and scratch. Each stream's rows
  // equal those of running it alone within float rounding (the matrix products' row count differs, and with
  // it the kernel's summation order; tests/speech_encoder/speech_encoder_test.cpp).
  static size_t run_ready_chunks(std::span<SpeechEncoderStream* const> streams,
                                 std::span<std::vector<float>* const> outs,
                                 int64_t max_chunks_each = std::numeric_limits<int64_t>::max());

  size_t frames_pushed() const { return frames_pushed_; }
  size_t rows_emitted() const { return rows_emitted_; }
  int64_t encoder_frames_done() const { return pos_; }
  // Key/value rows held per layer (bounded by (left_chunks + 1) * chunk_frames when left_chunks > 0).
  size_t cache_rows() const;

 private:
  // Appends the outputs of one causal conv over a history buffer; consumes the rows it no longer needs.
  void conv_step(std::vector<float>& hist, int64_t width, size_t w, size_t b, int64_t out_width,
                 std::vector<float>& out_rows);
  // One chunk (the first min(chunk_frames, pending) encoder frames) of every stream through the Transformer
  // and the projector, stacked; every stream has a chunk ready.
  static size_t run_chunks(std::span<SpeechEncoderStream* const> streams,
                           std::span<std::vector<float>* const> outs);

  const SpeechEncoderModel& model_;
  int n_threads_;
  std::vector<float> inv_freq_;
  std::vector<float> hist1_, hist2_;  // conv inputs from the start of the next window on
  std::vector<float> pending_;        // encoder frames of the chunk being filled [n, d_model]
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer [rows, d_model], keys after RoPE
  std::vector<std::vector<float>> conv_hist_;  // per layer: the convolution module's last K - 1 GLU rows
  int64_t cache_begin_ = 0;                    // encoder frame index of the first cached row
  int64_t pos_ = 0;                            // encoder frames already through the Transformer
  size_t frames_pushed_ = 0;
  size_t rows_emitted_ = 0;
  bool finished_ = false;
  // Scratch (of the first stream of a stacked pass).
  std::vector<float> proj_in_, proj_out_;
  std::vector<int64_t> row_begin_;
  std::vector<float> cols_, conv_pre_, conv_out_, x_, h_, q_, k_, v_, att_, gate_, up_, cos_, sin_, scores_,
      hid_, pw1_;
};

}  // namespace gpstream::speech_encoder
