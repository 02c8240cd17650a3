// The training forward and hand-written backward of the decoder (llm.c style). Parameters live in flat
// fp32 ParamSets (params.h, lora.h); forward runs over a TrainBatch of packed sequences — all tokens of all
// sequences in one [n_tok, ...] activation matrix, so every linear layer is one GEMM with a big M — and
// keeps what backward needs in one activation block planned from TrainShape at construction. Attention
// is per (sequence, head) with the structured mask of gpe.md §4/§6 (each row sees the first n_src source
// and the first n_tgt target rows of its sequence), the same semantics as model::Transformer::forward.
// Loss: cross-entropy on labelled rows (row r predicts labels[r]; no shift). Backward adds into grads.
//   block: x += o(attn(rope(q(norm(x))), rope(k(norm(x))), v(norm(x))));  x += down(act(gate(norm(x))) *
//   up(norm(x)))
// with every family feature of ModelConfig (Gemma 2's sandwich norms x += norm(o(...)), embedding scale,
// (1 + w) norms, soft-caps, per-layer sliding window; Phi-3's fused tensors, partial rotary, longrope) and
// its exact backward.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "io/tensor.h"
#include "model/model_config.h"
#include "model/rope_frequencies.h"
#include "train/lora.h"
#include "train/params.h"
#include "util/error.h"

namespace gpstream::train {

// One sequence of a batch, in cache order (the laid-out example of gpe.md §8.1 plus labels).
struct TrainSequence {
  std::vector<int32_t> ids;
  std::vector<float> positions;
  std::vector<uint8_t> groups;  // 0 source, 1 target (static_cast of model::Group)
  std::vector<int32_t> n_src;   // visible source rows of the sequence
  std::vector<int32_t> n_tgt;   // visible target rows
  std::vector<int32_t> labels;  // token row r predicts; < 0: no loss on this row
  // Input embedding rows (speech): empty, or one entry per row: ≥ 0 takes the row's input from row
  // input_row[r] of `inputs` (n_embd floats each, in the embedding table's space, so Gemma's embedding
  // scale applies as to a table row) instead of ids[r]'s table row (then ids[r] is ignored, e.g. −1).
  std::vector<int32_t> input_row;
  std::vector<float> inputs;

  size_t size() const { return ids.size(); }
  void push(int32_t id, float pos, uint8_t group, int32_t ns, int32_t nt, int32_t label) {
    ids.push_back(id);
    positions.push_back(pos);
    groups.push_back(group);
    n_src.push_back(ns);
    n_tgt.push_back(nt);
    labels.push_back(label);
  }
  int64_t n_labels() const;
  // Checks lengths agree, ids and labels are in the vocabulary, visibility within the sequence, input
  // rows within `inputs` (rows of n_embd floats).
  Status validate(int32_t n_vocab, int32_t n_embd) const;
};

struct TrainBatch {
  std::vector<TrainSequence> seqs;
  int64_t n_tokens() const;
  int64_t n_labels() const;
};

// Capacity of the activation block: at most max_tokens tokens per batch, no sequence longer than max_seq.
struct TrainShape {
  int64_t max_tokens = 2048;
  int64_t max_seq = 512;
};

struct ForwardOptions {
  bool all_logits = false;    // keep logits for every row (tests, parity), not only labelled ones
  bool training = true;       // LoRA dropout on
  uint64_t dropout_seed = 0;  // dropout masks are a hash of (seed, layer, target, element)
};

class TrainModel {
 public:
  // `init`: Hugging Face-named tensors of the base model (any dtype). LoRA on when lora.rank > 0: the
  // base is frozen and only the adapters are trained; otherwise every base parameter is trained.
  static Result<std::unique_ptr<TrainModel>> create(const model::ModelConfig& config,
                                                    const io::TensorMap& init, const LoraOptions& lora,
                                                    uint64_t lora_seed, TrainShape shape, int n_threads = 0);

  const model::ModelConfig& config() const { return config_; }
  const LoraOptions& lora_options() const { return lora_; }
  bool lora_enabled() const { return lora_.rank > 0; }
  ParamSet& base() { return base_; }
  const ParamSet& base() const { return base_; }
  ParamSet& lora() { return lora_params_; }
  const ParamSet& lora() const { return lora_params_; }
  // The trained set (LoRA adapters, or the base) and its gradient buffer (same size and offsets).
  ParamSet& trainable() { return lora_enabled() ? lora_params_ : base_; }
  std::vector<float>& grads() { return grads_; }
  const TrainShape& shape() const { return shape_; }

  // Runs the forward; returns the sum of the cross-entropy over labelled rows (the caller divides by
  // the label count for the token mean). Errors: batch too large for the planned shape, bad ids.
  Result<double> forward(const TrainBatch& batch, const ForwardOptions& options = {});
  // Logits of the last forward: rows = labelled rows in batch order, or all rows with all_logits.
  const float* logits() const { return acts_.data() + glob_.logits; }
  int64_t n_logit_rows() const { return n_out_; }

  // After forward(): the attention probabilities of sequence `seq` of the batch at layer `layer`,
  // [n_head][T][T] with T its rows: entry (h, i, j) is how much row i attends to row j (cache order), 0 where
  // row i does not see row j. What `gpstream attention` draws (train/attention_map.h).
  std::vector<float> attention_probabilities(size_t seq, int layer) const;

  void zero_grad();
  // Adds d(loss_scale · loss_sum)/dθ into grads() (loss_scale = 1 / labels of the whole optimizer step
  // for a token mean under gradient accumulation). Must follow forward() on the same batch.
  void backward(float loss_scale);

  // After backward(): d(loss_scale · loss_sum)/d inputs of sequence `seq` of the last batch, laid out like
  // its `inputs` (empty for a sequence without input rows). This is what trains a speech encoder.
  const std::vector<float>& input_grad(size_t seq) const { return input_grads_[seq]; }

  // Adds scale·B·A of every adapter into the base weights (LoRA stays as it is; call once, for export).
  void merge_lora_into_base();

  int n_threads() const { return n_threads_; }
  // Model FLOPs of one forward+backward over `batch` (GEMMs and attention; for utilisation figures).
  double step_flops(const TrainBatch& batch) const;

 private:
  TrainModel() = default;
  struct LayerActs {
    size_t x, h1, q, k, v, att, x_mid, h2, gate, up, act, probs;
    size_t o_raw, d_raw;  // sandwich norms: attention / MLP outputs before their post-norm
    std::array<size_t, kLoraTargets> xa;
  };
  struct GlobalActs {
    size_t x_final, hf, logits, cos_t, sin_t, mask, mask_sw, cap_rows;
    size_t dx, dh, dq, dk, dv, datt, dgate, dup, dact, att_scratch, dxa, drop, dnorm;
  };
  size_t
  plan();  // lays out the activation block (offsets in layer_acts_ / glob_); returns its size in floats
  void lora_forward(int il, LoraTarget t, float* y, const float* x, int64_t in, int64_t out, int64_t n,
                    const ForwardOptions& o);
  void lora_backward(int il, LoraTarget t, float* dx, const float* dy, const float* x, int64_t in,
                     int64_t out, int64_t n);
  void dropout_apply(float* dst, const float* x, int64_t n_elems, int il, LoraTarget t) const;
  void rmsnorm_bwd_parallel(float* dx, float* dw, const float* dout, const float* x, const float* w,
                            int64_t n);

  model::ModelConfig config_;
  LoraOptions lora_;
  TrainShape shape_;
  int n_threads_ = 1;
  ParamSet base_;
  ModelLayout layout_;
  ParamSet lora_params_;
  std::vector<LoraLayerLayout> lora_layout_;
  std::vector<float> grads_;
  model::RopeFrequencies rope_;

  std::vector<float> acts_;  // the one activation block
  std::vector<LayerActs> layer_acts_;
  GlobalActs glob_{};

  // State of the last forward.
  const TrainBatch* batch_ = nullptr;
  std::vector<int64_t> seq_begin_;  // token offset of each sequence
  std::vector<int64_t> mask_off_;   // offset of each sequence's mask / probs block (per head for probs)
  int64_t n_tok_ = 0, n_out_ = 0, probs_per_head_ = 0;
  std::vector<int32_t> row_end_;      // per token: one past its last visible key in its sequence
  std::vector<int32_t> row_end_sw_;   // the same under the sliding-window mask
  std::vector<int64_t> out_rows_;     // token index of each logits row
  std::vector<int32_t> out_targets_;  // label of each logits row (< 0: none)
  ForwardOptions fwd_opts_;
  std::vector<std::vector<float>> input_grads_;  // per sequence of the last backward
};

}  // namespace gpstream::train
