// Hugging Face tensor names → Weights, with shape and dtype checks.
#include "model/weights.h"

#include "model/tensor_names.h"

namespace gpstream::model {
namespace {

struct Loader {
  const io::TensorMap& map;

  Result<const io::TensorData*> get(const std::string& name, std::vector<int64_t> shape) const {
    const io::TensorData* t = map.find(name);
    if (!t) return not_found("missing tensor " + name);
    if (t->shape != shape) {
      io::TensorData expected;
      expected.shape = shape;
      return format_error("tensor " + name + " has shape " + t->shape_string() + ", expected " +
                          expected.shape_string());
    }
    return t;
  }
  Result<kernels::MatrixView> matrix(const std::string& name, int64_t rows, int64_t cols) const {
    GPS_ASSIGN(const io::TensorData* t, get(name, {rows, cols}));
    return kernels::MatrixView{weight_type(t->dtype), rows, cols, t->bytes.data()};
  }
  // Rows [row0, row0 + rows) of a fused matrix.
  static kernels::MatrixView rows_of(const kernels::MatrixView& m, int64_t row0, int64_t rows) {
    return kernels::MatrixView{m.type, rows, m.cols, m.row(row0)};
  }
  Result<std::vector<float>> vec(const std::string& name, int64_t n) const {
    GPS_ASSIGN(const io::TensorData* t, get(name, {n}));
    return io::tensor_to_f32(*t);
  }
};

}  // namespace

kernels::WeightType weight_type(io::DType t) {
  switch (t) {
    case io::DType::F32:
      return kernels::WeightType::F32;
    case io::DType::F16:
      return kernels::WeightType::F16;
    case io::DType::BF16:
      return kernels::WeightType::BF16;
    case io::DType::Q8_0:
      return kernels::WeightType::Q8_0;
    case io::DType::Q4_0:
      return kernels::WeightType::Q4_0;
    case io::DType::Q4_K:
    case io::DType::Q6_K:
      break;  // dequantized at load (gguf_model.cpp), never viewed
  }
  return kernels::WeightType::F32;
}

Status check_layer_count(int64_t n_layer, size_t n_tensors, const std::string& field) {
  if (n_layer <= static_cast<int64_t>(n_tensors) / kMinTensorsPerLayer) return {};
  return format_error(field + ": " + std::to_string(n_layer) + " layers need at least " +
                      std::to_string(n_layer * kMinTensorsPerLayer) + " tensors, the weights hold " +
                      std::to_string(n_tensors));
}

Result<Weights> weights_from_tensors(const ModelConfig& c, io::TensorMap tensors) {
  // The per-layer table below is sized by the count: a count the tensors cannot hold is refused first.
  GPS_TRY(check_layer_count(c.n_layer, tensors.tensors.size(), "num_hidden_layers"));
  Weights w;
  w.storage = std::move(tensors);
  Loader L{w.storage};
  const int64_t E = c.n_embd, Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim;
  auto name = [&](TensorId id, int il = 0) { return hf_name(c, id, il); };
  GPS_ASSIGN(w.tok_embd, L.matrix(name(TensorId::TokEmbd), c.n_vocab, E));
  GPS_ASSIGN(w.output_norm, L.vec(name(TensorId::OutputNorm), E));
  if (c.tie_word_embeddings) {
    w.output = w.tok_embd;
  } else {
    GPS_ASSIGN(w.output, L.matrix(name(TensorId::Output), c.n_vocab, E));
  }
  w.layers.resize(c.n_layer);
  for (int il = 0; il < c.n_layer; ++il) {
    LayerWeights& l = w.layers[il];
    GPS_ASSIGN(l.attn_norm, L.vec(name(TensorId::AttnNorm, il), E));
    if (c.fused_qkv) {
      GPS_ASSIGN(kernels::MatrixView qkv, L.matrix(name(TensorId::AttnQkv, il), Q + 2 * KV, E));
      l.wq = Loader::rows_of(qkv, 0, Q);
      l.wk = Loader::rows_of(qkv, Q, KV);
      l.wv = Loader::rows_of(qkv, Q + KV, KV);
    } else {
      GPS_ASSIGN(l.wq, L.matrix(name(TensorId::AttnQ, il), Q, E));
      GPS_ASSIGN(l.wk, L.matrix(name(TensorId::AttnK, il), KV, E));
      GPS_ASSIGN(l.wv, L.matrix(name(TensorId::AttnV, il), KV, E));
    }
    GPS_ASSIGN(l.wo, L.matrix(name(TensorId::AttnOut, il), E, Q));
    if (c.qkv_bias) {
      GPS_ASSIGN(l.bq, L.vec(name(TensorId::AttnQBias, il), Q));
      GPS_ASSIGN(l.bk, L.vec(name(TensorId::AttnKBias, il), KV));
      GPS_ASSIGN(l.bv, L.vec(name(TensorId::AttnVBias, il), KV));
    }
    if (c.o_bias) {
      GPS_ASSIGN(l.bo, L.vec(name(TensorId::AttnOutBias, il), E));
    }
    if (c.sandwich_norms) {
      GPS_ASSIGN(l.attn_post_norm, L.vec(name(TensorId::AttnPostNorm, il), E));
      GPS_ASSIGN(l.ffn_post_norm, L.vec(name(TensorId::FfnPostNorm, il), E));
    }
    GPS_ASSIGN(l.ffn_norm, L.vec(name(TensorId::FfnNorm, il), E));
    if (c.fused_gate_up) {
      GPS_ASSIGN(kernels::MatrixView gu, L.matrix(name(TensorId::FfnGateUp, il), 2 * int64_t{c.n_ff}, E));
      l.w_gate = Loader::rows_of(gu, 0, c.n_ff);
      l.w_up = Loader::rows_of(gu, c.n_ff, c.n_ff);
    } else {
      GPS_ASSIGN(l.w_gate, L.matrix(name(TensorId::FfnGate, il), c.n_ff, E));
      GPS_ASSIGN(l.w_up, L.matrix(name(TensorId::FfnUp, il), c.n_ff, E));
    }
    GPS_ASSIGN(l.w_down, L.matrix(name(TensorId::FfnDown, il), E, c.n_ff));
  }
  return w;
}

}  // namespace gpstream::model
