// Parameters of the speech encoder (speech_encoder_config.h) as llm.c keeps them: one flat fp32 buffer and a
// table of named tensors with offsets; gradients are a second buffer of the same size, indexed by the same
// offsets. Names and shapes (stored in safetensors under these names; docs/speech.md):
//   encoder.conv1.weight [conv_channels, conv_kernel, n_mels]   encoder.conv1.bias [conv_channels]
//   encoder.conv2.weight [d_model, conv_kernel, conv_channels]  encoder.conv2.bias [d_model]
//   encoder.layers.{i}.attn_norm.weight [d_model]
//   encoder.layers.{i}.attn.{q,k,v,o}.weight [d_model, d_model]
//   with conv_module_kernel > 0 (the convolution module):
//     encoder.layers.{i}.conv_norm.weight [d_model]
//     encoder.layers.{i}.conv.pw1.weight [2 d_model, d_model]   encoder.layers.{i}.conv.dw.weight
//     [d_model, conv_module_kernel]                              encoder.layers.{i}.conv.pw2.weight [d_model,
//     d_model]
//   encoder.layers.{i}.ffn_norm.weight [d_model]
//   encoder.layers.{i}.ffn.{gate,up}.weight [n_ff, d_model]      encoder.layers.{i}.ffn.down.weight [d_model,
//   n_ff] encoder.norm.weight [d_model] projector.fc1.weight [proj_hidden, stack * d_model]
//   projector.fc1.bias [proj_hidden] projector.fc2.weight [llm_hidden, proj_hidden] projector.fc2.bias
//   [llm_hidden]
// Convolution weight [out, k, in] multiplies input frame (2t + 2 - kernel + k) for output frame t.
// The config is stored as JSON in the metadata key "gpstream.speech_encoder".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/flat_tensors.h"
#include "speech_encoder/speech_encoder_config.h"
#include "util/error.h"

namespace gpstream::speech_encoder {

inline constexpr const char* kSpeechEncoderMetadataKey = "gpstream.speech_encoder";

struct SpeechEncoderTensor : io::FlatTensor {
  bool is_matrix = false;  // weights of linear maps / convolutions (weight decay, random init)
};

// Offsets of one Transformer block's tensors in the flat buffer.
struct SpeechEncoderLayerOffsets {
  size_t attn_norm = 0, wq = 0, wk = 0, wv = 0, wo = 0, ffn_norm = 0, w_gate = 0, w_up = 0, w_down = 0;
  size_t conv_norm = 0, conv_pw1 = 0, conv_dw = 0, conv_pw2 = 0;  // with conv_module_kernel > 0 only
};

struct SpeechEncoderOffsets {
  size_t conv1_w = 0, conv1_b = 0, conv2_w = 0, conv2_b = 0;
  std::vector<SpeechEncoderLayerOffsets> layers;
  size_t norm = 0;
  size_t fc1_w = 0, fc1_b = 0, fc2_w = 0, fc2_b = 0;
};

class SpeechEncoderModel {
 public:
  // Zero-filled parameters for a valid config (asserts validity: validate() it first).
  explicit SpeechEncoderModel(const SpeechEncoderConfig& config);

  // Seeded random initialisation: every matrix uniform in ±1/sqrt(fan_in) (the residual outputs attn.o,
  // conv.pw2 and ffn.down further scaled by 1/sqrt(2 n_layer)); norms 1, biases 0. Deterministic for a seed.
  void init_random(uint64_t seed);

  // Storage::F32 writes every tensor in F32; Storage::MatricesBf16 writes the matrices (is_matrix) in BF16
  // (round to nearest even) and the norms and biases in F32: half the file, at most 2^-8 relative error per
  // weight.
  enum class Storage { F32, MatricesBf16 };
  Status save(const std::string& path, Storage storage = Storage::F32) const;
  // Reads the config from the metadata, then every tensor (shape checked, F32/F16/BF16 accepted).
  static Result<SpeechEncoderModel> load(const std::string& path);

  const SpeechEncoderConfig& config() const { return config_; }
  const SpeechEncoderOffsets& offsets() const { return offsets_; }
  const std::vector<SpeechEncoderTensor>& tensors() const { return tensors_; }
  const SpeechEncoderTensor* find(const std::string& name) const;
  std::vector<float>& values() { return values_; }
  const std::vector<float>& values() const { return values_; }
  const float* data() const { return values_.data(); }
  float* data() { return values_.data(); }
  size_t size() const { return values_.size(); }

 private:
  size_t add(std::string name, std::vector<int64_t> shape, bool is_matrix);

  SpeechEncoderConfig config_;
  SpeechEncoderOffsets offsets_;
  std::vector<SpeechEncoderTensor> tensors_;
  std::vector<float> values_;
};

}  // namespace gpstream::speech_encoder
