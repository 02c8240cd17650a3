// Transformer: the decoder-only forward pass shared by every model family and every paradigm. It knows
// nothing of streaming: positions and visibility arrive in the Batch, K/V rows go to each sequence's
// KvCache region in batch order, and logits come back only for the rows that asked for them.
//   block: x += o(attn(rope(q(norm(x))), rope(k(norm(x))), v(norm(x))));  x += down(act(gate(norm(x))) *
//   up(norm(x)))
// Gemma 2 wraps both sublayer outputs in a further norm (x += norm(o(...)), x += norm(down(...))), scales
// the embeddings, soft-caps attention scores and logits, and slides a window over alternate layers
// (docs/models.md, sliding windows: the window counts rows of each group separately).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/batch.h"
#include "model/forward_model.h"
#include "model/model_config.h"
#include "model/weights.h"
#include "util/mapped_file.h"

namespace gpstream::model {

class Transformer : public ForwardModel {
 public:
  Transformer(ModelConfig config, Weights weights, int n_threads = 0);

  // Loads a Hugging Face model directory (config.json + safetensors) or a .gguf file (gguf_model.h). Weights
  // are read into private huge-page memory unless GPSTREAM_MMAP=1 asks for the shared file mapping
  // (default_weight_residency()).
  static Result<std::unique_ptr<Transformer>> load(const std::string& path, int n_threads = 0,
                                                   Residency residency = default_weight_residency());

  const ModelConfig& config() const override { return config_; }
  const Weights& weights() const { return weights_; }
  const RopeFrequencies& rope() const override { return rope_; }
  int n_threads() const { return n_threads_; }
  void set_threads(int n);
  // Counts tokens forwarded since construction (tests check gpe.md §8.3 with it).
  int64_t tokens_forwarded() const { return tokens_forwarded_; }

  // Runs the batch. caches[seq] receives the K/V rows of that sequence's tokens. logits: resized to
  // [batch.n_logits(), n_vocab], rows in batch order. Errors (bad ids, input embedding rows not
  // n_embd wide or past the buffer, visibility past the region, cache capacity) leave the caches unchanged.
  Status forward(const Batch& batch, std::span<KvCache* const> caches, std::vector<float>& logits) override;
  // Convenience: one sequence.
  Status forward(const Batch& batch, KvCache& cache, std::vector<float>& logits);
  std::span<const float> source_attention(int i) const override;

 private:
  struct Workspace {
    std::vector<float> x, h, q, k, v, attn, gate, up, cos_t, sin_t, scratch, scores, out_hidden;
    std::vector<float> team;  // the decode team's per-thread buffers (transformer_team.cpp)
    std::vector<int> slot;
    // The attention tap (source_attention): per batch row, its offset in `tap` or -1; per tapped row, its
    // offset and size.
    std::vector<int64_t> tap_offset;
    std::vector<std::pair<int64_t, int64_t>> tap_rows;
    std::vector<float> tap;
  };
  Status validate(const Batch& batch, std::span<KvCache* const> caches) const;
  // The layers and the LM head, one parallel region per step (any batch; transformer.cpp) or one thread
  // team for the whole forward (few tokens on several threads; transformer_team.cpp). Both start from
  // the embeddings in ws_.x, the rope tables and the row slots, and leave identical logits.
  void layers_and_head(const Batch& batch, std::span<KvCache* const> caches, int max_visible,
                       std::vector<float>& logits);
  // Steps of a layer both paths share: rotate the batch's q and k and append k and v to the caches;
  // attention of work item `item` (batch row item / n_head, head item % n_head) into ws_.attn.
  void rotate_and_append(const Batch& batch, std::span<KvCache* const> caches, int il);
  void attend(const Batch& batch, std::span<KvCache* const> caches, int il, int64_t item, float* scores);
  // The tap's probabilities for (token t of n_src source rows, layer il, head h), from the unnormalised
  // weights the attention kernel left in scores for the n rows the token saw: the first n_shown of them are
  // source rows s0, s0 + 1, ….
  void record_attention(int64_t t, int n_src, int il, int64_t h, int s0, int64_t n_shown, int64_t n,
                        const float* scores);
  // Layer il on residual stream x (h: its normed input, post: a sublayer output's norm under sandwich norms;
  // may be ws_.h), each step spread over threads by the executor (transformer_block.h).
  template <typename Executor>
  void run_block(Executor& ex, const Batch& batch, std::span<KvCache* const> caches, int il, float* x,
                 float* h, float* post);
  // The final norm of x's rows that asked for logits, into ws_.out_hidden; soft-capping of logits.
  void norm_output_rows(const Batch& batch, const float* x);
  void cap_logits(std::vector<float>& logits) const;
  bool team_applies(int64_t n_tok) const;
  void layers_and_head_in_team(const Batch& batch, std::span<KvCache* const> caches, int max_visible,
                               std::vector<float>& logits);

  ModelConfig config_;
  Weights weights_;
  RopeFrequencies rope_;
  int n_threads_;
  int64_t tokens_forwarded_ = 0;
  Workspace ws_;
};

}  // namespace gpstream::model
