// Sizes of the streaming speech encoder (docs/speech.md, "Speech encoder"): causal conv1d subsampling
// (two layers, stride 2 each: 40 ms per encoder frame), a causal chunked Transformer (optionally with a
// causal convolution module per block, Conformer-style), and a projector into
// an LLM's embedding space. The config travels with the weights (safetensors metadata, JSON).
#pragma once

#include <cstdint>
#include <string>

#include "util/error.h"

namespace gpstream {
class JsonReader;  // util/json_reader.h
}  // namespace gpstream

namespace gpstream::speech_encoder {

struct SpeechEncoderConfig {
  int64_t n_mels = 80;  // input features per 10 ms frame (log_mel.h)
  // Fixed input normalisation x' = (x + mel_shift) * mel_scale (causal: no utterance statistics). The
  // defaults map log-mel features of speech at ordinary levels (mean about -7, spread about 4) near zero mean
  // and unit spread; a trainer may set them from its data's statistics.
  float mel_shift = 7.0f;
  float mel_scale = 0.25f;
  int64_t conv_kernel = 3;      // taps of both causal convolutions (>= 2)
  int64_t conv_channels = 256;  // output channels of the first convolution
  int64_t d_model = 256;        // Transformer width (output channels of the second convolution)
  int64_t n_layer = 4;
  int64_t n_head = 4;  // head_dim = d_model / n_head (even: RoPE)
  int64_t n_ff = 768;  // SwiGLU inner size
  // Depthwise kernel of a Conformer-style convolution module between attention and the FFN of every block
  // (causal: frame t sees frames t - K + 1 .. t); 0 = no module (the files written before it existed).
  int64_t conv_module_kernel = 0;
  int64_t chunk_frames = 8;    // encoder frames per attention chunk (8 x 40 ms = 320 ms)
  int64_t left_chunks = 0;     // past chunks a frame sees (0 = all of them)
  int64_t stack = 2;           // encoder frames concatenated into one projector input (80 ms per row)
  int64_t proj_hidden = 1024;  // projector MLP inner size
  int64_t llm_hidden = 256;    // output row size: the LLM's hidden size
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;

  int64_t head_dim() const { return d_model / n_head; }
  // Log-mel frames per encoder frame (4) and per output row (4 * stack).
  static constexpr int64_t kSubsampling = 4;
  int64_t mel_frames_per_row() const { return kSubsampling * stack; }
  // A chunk (the streaming unit: a source unit for wait-k counted in chunks) spans 4 * chunk_frames log-mel
  // frames (chunk_frames * 40 ms) and gives chunk_frames / stack output rows.
  int64_t mel_frames_per_chunk() const { return kSubsampling * chunk_frames; }
  int64_t rows_per_chunk() const { return chunk_frames / stack; }
  // Output rows of a whole utterance of n log-mel frames: floor(floor(floor(n / 2) / 2) / stack).
  int64_t output_rows(int64_t n_mel_frames) const;
  // Number of trainable parameters (every tensor of speech_encoder_params.h).
  int64_t parameter_count() const;

  // Every size positive and bounded (a config read from a file is untrusted), d_model % n_head == 0,
  // head_dim even, chunk_frames % stack == 0.
  Status validate() const;
  std::string to_json() const;
  // The form to_json() writes (gpstream's own: unknown keys are refused), validated; errors name `where`.
  static Result<SpeechEncoderConfig> from_json(const std::string& text,
                                               const std::string& where = "speech encoder config");
  // Replaces the fields `r` holds, range-checked each (`all_required`: every field but conv_module_kernel
  // must be there). Does not call r.finish() or validate().
  Status read_fields(JsonReader& r, bool all_required);
};

}  // namespace gpstream::speech_encoder
