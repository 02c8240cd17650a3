// Model weights as read-only views in their stored precision (F32/F16/BF16), pointing into memory-mapped
// safetensors or buffers held by `storage`. Fused tensors (Phi-3's qkv_proj, gate_up_proj) are split into
// row-range views without copying. Norm weights and biases are small and kept as fp32 copies.
// tensor_names.h maps Hugging Face names to these fields; shapes and dtypes are checked against the
// ModelConfig at load, with errors naming the tensor.
#pragma once

#include <string>
#include <vector>

#include "io/tensor.h"
#include "kernels/kernels.h"
#include "model/model_config.h"
#include "util/huge_page_buffer.h"

namespace gpstream::model {

struct LayerWeights {
  std::vector<float> attn_norm;       // [n_embd]
  kernels::MatrixView wq, wk, wv;     // [n_head*head_dim, n_embd], [n_head_kv*head_dim, n_embd] x2
  std::vector<float> bq, bk, bv;      // empty unless qkv_bias
  kernels::MatrixView wo;             // [n_embd, n_head*head_dim]
  std::vector<float> bo;              // empty unless o_bias
  std::vector<float> attn_post_norm;  // [n_embd] (sandwich_norms only)
  std::vector<float> ffn_norm;        // [n_embd]
  std::vector<float> ffn_post_norm;   // [n_embd] (sandwich_norms only)
  kernels::MatrixView w_gate, w_up;   // [n_ff, n_embd]
  kernels::MatrixView w_down;         // [n_embd, n_ff]
};

struct Weights {
  kernels::MatrixView tok_embd;  // [n_vocab, n_embd]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;  // [n_embd]
  kernels::MatrixView output;      // [n_vocab, n_embd]; the embedding matrix when tied
  io::TensorMap storage;           // owns the bytes the views point into
  HugePageBuffer repacked;         // matrices repacked for the kernels (weight_repack.h), if any
};

// Builds weight views from Hugging Face-named tensors, checking every name, shape and dtype.
Result<Weights> weights_from_tensors(const ModelConfig& config, io::TensorMap tensors);

// Every layer has at least this many tensors (two norms, attention in and out, MLP in and out; fused or not).
inline constexpr int64_t kMinTensorsPerLayer = 6;
// Refuses a layer count that `n_tensors` tensors cannot hold, naming `field` ("dir/config.json:
// num_hidden_layers"): checked before anything is sized by the count.
Status check_layer_count(int64_t n_layer, size_t n_tensors, const std::string& field);

kernels::WeightType weight_type(io::DType t);

}  // namespace gpstream::model
