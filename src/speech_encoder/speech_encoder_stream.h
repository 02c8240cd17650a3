// Streaming speech encoder: log-mel frames go in as they arrive, projected embedding rows come out chunk by
// chunk. State: the convolutions' left context (the last input rows of each), the encoder frames of the
// chunk being filled, a key/value cache per Transformer layer (trimmed to `left_chunks` chunks when
// the config bounds the left context) and, with the convolution module, its last K - 1 input rows per layer.
// A chunk of chunk_frames encoder frames (4 log-mel frames each) is run through the Transformer as soon as
// its last frame exists: no look-ahead beyond the chunk. finish() runs the partial last chunk. The rows equal
// SpeechEncoderPass::forward over the whole utterance (within float rounding: the products are summed in
// another order) for any chunking of the input.
#pragma once

#include <cstddef>
#include <cstdint>
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

  size_t frames_pushed() const { return frames_pushed_; }
  size_t rows_emitted() const { return rows_emitted_; }
  int64_t encoder_frames_done() const { return pos_; }
  // Key/value rows held per layer (bounded by (left_chunks + 1) * chunk_frames when left_chunks > 0).
  size_t cache_rows() const;

 private:
  // Appends the outputs of one causal conv over a history buffer; consumes the rows it no longer needs.
  void conv_step(std::vector<float>& hist, int64_t width, size_t w, size_t b, int64_t out_width,
                 std::vector<float>& out_rows);
  size_t run_chunk(std::vector<float>& out);

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
  // Scratch.
  std::vector<float> cols_, conv_pre_, conv_out_, x_, h_, q_, k_, v_, att_, gate_, up_, cos_, sin_, scores_,
      hid_, pw1_;
};

}  // namespace gpstream::speech_encoder
