// The forward pass.
#include "model/transformer.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "io/gguf.h"
#include "io/safetensors.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/convert.h"
#include "kernels/linear.h"
#include "kernels/linear_fused.h"
#include "kernels/norm.h"
#include "kernels/rope.h"
#include "model/gguf_model.h"
#include "model/transformer_block.h"
#include "model/weight_repack.h"

namespace gpstream::model {

Transformer::Transformer(ModelConfig config, Weights weights, int n_threads)
    : config_(std::move(config)), weights_(std::move(weights)), rope_(RopeFrequencies::from_config(config_)) {
  repack_weights_for_kernels(weights_);
  set_threads(n_threads);
}

// Below this many parameters a forward is too short to split: a second thread's synchronisation costs more
// than it gives (the shipped 6.8M model decodes ~2x faster on one thread; docs/performance.md).
constexpr size_t kOneThreadBelowParams = 20'000'000;

void Transformer::set_threads(int n) {
  if (n > 0)
    n_threads_ = n;
  else
    n_threads_ = config_.n_params() < kOneThreadBelowParams ? 1 : std::max(1, omp_get_max_threads());
}

Result<std::unique_ptr<Transformer>> Transformer::load(const std::string& path, int n_threads,
                                                       Residency residency) {
  if (is_gguf_path(path)) {
    // The GGUF file handle goes out of scope before the Transformer is built, so the weights hold the only
    // reference to the file's bytes (weight_repack.h then releases the pages it replaces).
    auto loaded = [&]() -> Result<std::pair<ModelConfig, Weights>> {
      GPS_ASSIGN(io::GgufFile g, io::read_gguf(path, residency));
      auto config = config_from_gguf(g);
      if (!config.ok()) return config.error().with_context(path);
      auto tensors = hf_tensors_from_gguf(g, *config);
      if (!tensors.ok()) return tensors.error().with_context(path);
      auto w = weights_from_tensors(*config, std::move(tensors).value());
      if (!w.ok()) return w.error().with_context(path);
      return std::pair{std::move(config).value(), std::move(w).value()};
    }();
    if (!loaded.ok()) return loaded.error();
    auto& [config, w] = *loaded;
    return std::make_unique<Transformer>(std::move(config), std::move(w), n_threads);
  }
  GPS_ASSIGN(ModelConfig config, load_hf_config(path));
  GPS_ASSIGN(io::TensorMap tensors, io::read_safetensors_dir(path, residency));
  GPS_TRY(
      check_layer_count(config.n_layer, tensors.tensors.size(), path + "/config.json: num_hidden_layers"));
  auto w = weights_from_tensors(config, std::move(tensors));
  if (!w.ok()) return w.error().with_context(path);
  return std::make_unique<Transformer>(std::move(config), std::move(w).value(), n_threads);
}

Status Transformer::validate(const Batch& batch, std::span<KvCache* const> caches) const {
  std::vector<std::array<int, 2>> after(caches.size());
  for (size_t s = 0; s < caches.size(); ++s) {
    if (!caches[s]) return invalid_argument("forward: cache " + std::to_string(s) + " is null");
    after[s] = {caches[s]->rows(Group::Source), caches[s]->rows(Group::Target)};
  }
  // Input embedding rows: whole rows of exactly n_embd floats.
  int64_t n_rows = 0;
  if (batch.embedding_width != 0 || !batch.embeddings.empty()) {
    if (batch.embedding_width != config_.n_embd)
      return invalid_argument("forward: input embedding rows are " + std::to_string(batch.embedding_width) +
                              " floats wide, the model's n_embd is " + std::to_string(config_.n_embd));
    if (batch.embeddings.size() % static_cast<size_t>(config_.n_embd) != 0)
      return invalid_argument(
          "forward: the input embedding buffer holds " + std::to_string(batch.embeddings.size()) +
          " floats, not a whole number of rows of n_embd = " + std::to_string(config_.n_embd));
    n_rows = static_cast<int64_t>(batch.embeddings.size()) / config_.n_embd;
  }
  for (const BatchToken& t : batch.tokens) {
    if (t.seq < 0 || static_cast<size_t>(t.seq) >= caches.size())
      return invalid_argument("forward: token sequence " + std::to_string(t.seq) + " has no cache");
    if (t.embedding >= 0) {
      if (t.embedding >= n_rows)
        return out_of_range("forward: input embedding row " + std::to_string(t.embedding) +
                            " past the batch's " + std::to_string(n_rows) + " rows");
    } else if (t.id < 0 || t.id >= config_.n_vocab) {
      return out_of_range("forward: token id " + std::to_string(t.id) + " outside the vocabulary (size " +
                          std::to_string(config_.n_vocab) + ")");
    }
    if (!std::isfinite(t.pos)) return invalid_argument("forward: non-finite position");
    ++after[t.seq][static_cast<int>(t.group)];
  }
  for (const BatchToken& t : batch.tokens) {
    const auto& a = after[t.seq];
    if (t.n_src < 0 || t.n_tgt < 0 || t.n_src > a[0] || t.n_tgt > a[1])
      return invalid_argument("forward: visibility (" + std::to_string(t.n_src) + " source, " +
                              std::to_string(t.n_tgt) + " target rows) exceeds the cache (" +
                              std::to_string(a[0]) + ", " + std::to_string(a[1]) + ")");
  }
  return {};
}

Status Transformer::forward(const Batch& batch, KvCache& cache, std::vector<float>& logits) {
  KvCache* c = &cache;
  return forward(batch, std::span<KvCache* const>(&c, 1), logits);
}

Status Transformer::forward(const Batch& batch, std::span<KvCache* const> caches,
                            std::vector<float>& logits) {
  ws_.tap_rows.clear();
  GPS_TRY(validate(batch, caches));
  const ModelConfig& c = config_;
  const int64_t T = batch.size();
  const int64_t E = c.n_embd, D = c.head_dim, Q = int64_t{c.n_head} * D, KV = int64_t{c.n_head_kv} * D,
                F = c.n_ff, half = rope_.half();
  const int nt = n_threads_;
  logits.clear();
  if (T == 0) return {};
  kernels::set_blas_threads(nt);

  // Reserve cache rows first so a capacity error leaves every cache untouched.
  {
    std::vector<std::array<int, 2>> extra(caches.size(), {0, 0});
    for (const BatchToken& t : batch.tokens) ++extra[t.seq][static_cast<int>(t.group)];
    for (size_t s = 0; s < caches.size(); ++s)
      for (int g = 0; g < 2; ++g)
        if (extra[s][g]) GPS_TRY(caches[s]->reserve(static_cast<Group>(g), extra[s][g]));
  }
  Workspace& w = ws_;
  auto grow = [](std::vector<float>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  };
  grow(w.x, T * E);
  grow(w.h, T * E);
  grow(w.q, T * Q);
  grow(w.k, T * KV);
  grow(w.v, T * KV);
  grow(w.attn, T * Q);
  grow(w.gate, T * F);
  grow(w.up, T * F);
  grow(w.cos_t, T * half);
  grow(w.sin_t, T * half);
  int64_t scratch = kernels::linear_scratch_floats(weights_.output, T, nt);
  for (const LayerWeights& l : weights_.layers) {  // every layer: storage types may differ between layers
    const kernels::LinearOutput qkv[] = {{nullptr, 0, l.wq}, {nullptr, 0, l.wk}, {nullptr, 0, l.wv}};
    const kernels::LinearOutput gate_up[] = {{nullptr, 0, l.w_gate}, {nullptr, 0, l.w_up}};
    scratch = std::max({scratch, kernels::linear_fused_scratch_floats(qkv, T, nt),
                        kernels::linear_fused_scratch_floats(gate_up, T, nt),
                        kernels::linear_scratch_floats(l.wo, T, nt),
                        kernels::linear_scratch_floats(l.w_down, T, nt)});
  }
  grow(w.scratch, scratch);

  // Row slots in each region, in batch order.
  w.slot.resize(T);
  int max_visible = 0;
  {
    std::vector<std::array<int, 2>> next(caches.size());
    for (size_t s = 0; s < caches.size(); ++s)
      next[s] = {caches[s]->rows(Group::Source), caches[s]->rows(Group::Target)};
    for (int64_t t = 0; t < T; ++t) {
      const BatchToken& bt = batch.tokens[t];
      w.slot[t] = next[bt.seq][static_cast<int>(bt.group)]++;
      caches[bt.seq]->push_row(bt.group, bt.pos);
      max_visible = std::max(max_visible, bt.n_src + bt.n_tgt);
    }
  }
  grow(w.scores, int64_t{max_visible} * nt);
  // The attention tap's rows, zeroed (the layers add nothing: each (layer, head) writes its own part).
  w.tap_offset.assign(static_cast<size_t>(T), -1);
  w.tap_rows.clear();
  int64_t tapped = 0;
  for (int64_t t = 0; t < T; ++t)
    if (batch.tokens[t].attention) {
      const int64_t size = int64_t{c.n_layer} * c.n_head * batch.tokens[t].n_src;
      w.tap_offset[t] = tapped;
      w.tap_rows.emplace_back(tapped, size);
      tapped += size;
    }
  w.tap.assign(static_cast<size_t>(tapped), 0.0f);

  // Embeddings: the token's table row or its row of the batch's buffer (both in table space, then scaled).
  for (int64_t t = 0; t < T; ++t) {
    const BatchToken& bt = batch.tokens[t];
    if (bt.embedding >= 0)
      std::copy_n(batch.embeddings.data() + int64_t{bt.embedding} * E, E, w.x.data() + t * E);
    else
      kernels::convert_row(w.x.data() + t * E, weights_.tok_embd.row(bt.id), weights_.tok_embd.type, E);
    if (c.embed_scale != 1.0f)
      for (int64_t i = 0; i < E; ++i) w.x[t * E + i] *= c.embed_scale;
  }
  std::vector<float> positions(T);
  for (int64_t t = 0; t < T; ++t) positions[t] = batch.tokens[t].pos;
  rope_.table(w.cos_t.data(), w.sin_t.data(), positions.data(), T);

  if (team_applies(T))
    layers_and_head_in_team(batch, caches, max_visible, logits);
  else
    layers_and_head(batch, caches, max_visible, logits);
  tokens_forwarded_ += T;
  return {};
}

void Transformer::rotate_and_append(const Batch& batch, std::span<KvCache* const> caches, int il) {
  const ModelConfig& c = config_;
  Workspace& w = ws_;
  const int64_t T = batch.size(), Q = int64_t{c.n_head} * c.head_dim, KV = int64_t{c.n_head_kv} * c.head_dim;
  rope_.apply(w.q.data(), Q, w.cos_t.data(), w.sin_t.data(), T, c.n_head);
  rope_.apply(w.k.data(), KV, w.cos_t.data(), w.sin_t.data(), T, c.n_head_kv);
  for (int64_t t = 0; t < T; ++t) {
    const BatchToken& bt = batch.tokens[t];
    KvCache& kc = *caches[bt.seq];
    std::copy_n(w.k.data() + t * KV, KV, kc.k(il, bt.group) + int64_t{w.slot[t]} * KV);
    std::copy_n(w.v.data() + t * KV, KV, kc.v(il, bt.group) + int64_t{w.slot[t]} * KV);
  }
}

void Transformer::attend(const Batch& batch, std::span<KvCache* const> caches, int il, int64_t item,
                         float* scores) {
  const ModelConfig& c = config_;
  Workspace& w = ws_;
  const int64_t D = c.head_dim, Q = int64_t{c.n_head} * D, KV = int64_t{c.n_head_kv} * D;
  const kernels::AttentionShape shape{c.n_head, c.n_head_kv, D, KV, c.attention_scale(), c.attn_softcap};
  const int64_t t = item / c.n_head, h = item % c.n_head;
  const BatchToken& bt = batch.tokens[t];
  const KvCache& kc = *caches[bt.seq];
  // Sliding window: the last `window` visible rows of each group (docs/models.md, sliding windows).
  const int window = c.layer_slides(il) ? c.sliding_window : 0;
  const int s0 = window > 0 ? std::max(0, bt.n_src - window) : 0;
  const int t0 = window > 0 ? std::max(0, bt.n_tgt - window) : 0;
  kernels::KvRegion src{kc.k(il, Group::Source) + int64_t{s0} * KV,
                        kc.v(il, Group::Source) + int64_t{s0} * KV, bt.n_src - s0};
  kernels::KvRegion tgt{kc.k(il, Group::Target) + int64_t{t0} * KV,
                        kc.v(il, Group::Target) + int64_t{t0} * KV, bt.n_tgt - t0};
  kernels::attention_forward_token(w.attn.data() + t * Q, w.q.data() + t * Q, src, tgt, shape, h, h + 1,
                                   scores);
  if (w.tap_offset[t] >= 0)
    record_attention(t, bt.n_src, il, h, s0, src.n_visible, src.n_visible + tgt.n_visible, scores);
}

void Transformer::record_attention(int64_t t, int n_src, int il, int64_t h, int s0, int64_t n_shown,
                                   int64_t n, const float* scores) {
  if (n == 0) return;  // the kernel wrote no weights: the row sees nothing (its probabilities stay 0)
  // The kernel normalises by the float sum of the same weights; in double this sum is the exact one.
  double sum = 0;
  for (int64_t r = 0; r < n; ++r) sum += scores[r];
  float* out = ws_.tap.data() + ws_.tap_offset[t] + (int64_t{il} * config_.n_head + h) * n_src + s0;
  for (int64_t r = 0; r < n_shown; ++r) out[r] = static_cast<float>(scores[r] / sum);
}

std::span<const float> Transformer::source_attention(int i) const {
  if (i < 0 || static_cast<size_t>(i) >= ws_.tap_rows.size()) return {};
  const auto [offset, size] = ws_.tap_rows[static_cast<size_t>(i)];
  return std::span<const float>(ws_.tap).subspan(static_cast<size_t>(offset), static_cast<size_t>(size));
}

namespace {

// The per-step executor of the block (transformer_block.h): one parallel region per matrix product and per
// attention, each closed before the next step starts.
struct StepExecutor {
  int n_threads;
  float* scratch;
  float* scores;  // max_visible floats per thread
  int max_visible;
  int64_t q_width;  // n_head · head_dim
  int n_head;
  kernels::Activation act;

  void linear(std::span<const kernels::LinearOutput> outs, const float* x, int64_t ldx, int64_t n_tok,
              int) const {
    if (outs.size() == 1)
      kernels::linear_forward(outs[0].out, outs[0].ldo, x, ldx, outs[0].w, outs[0].bias, n_tok, scratch,
                              n_threads);
    else
      kernels::linear_forward_fused(outs, x, ldx, n_tok, scratch, n_threads);
  }
  template <typename Fn>
  void serially(Fn&& fn) const {
    fn();
  }
  template <typename Fn>
  void attention(Fn&& fn, int64_t n_tok) const {
    const int64_t work = n_tok * n_head;
    const bool parallel = int64_t{max_visible} * n_tok * q_width >= (int64_t{1} << 16);  // skip tiny work
#pragma omp parallel for num_threads(n_threads) schedule(static) if (parallel)
    for (int64_t item = 0; item < work; ++item)
      fn(item, scores + int64_t{omp_get_thread_num()} * max_visible);
  }
  void gated_activation(float* gate, const float* up, int64_t ld, int64_t n_tok) const {
    kernels::gated_act_forward(gate, ld, gate, up, ld, n_tok, ld, act);
  }
};

}  // namespace

void Transformer::norm_output_rows(const Batch& batch, const float* x) {
  const ModelConfig& c = config_;
  const int64_t E = c.n_embd;
  int64_t r = 0;
  for (int64_t t = 0; t < batch.size(); ++t)
    if (batch.tokens[t].logits)
      kernels::rmsnorm_forward(ws_.out_hidden.data() + r++ * E, E, x + t * E, E, weights_.output_norm.data(),
                               1, E, c.norm_eps, c.norm_weight_offset);
}

void Transformer::cap_logits(std::vector<float>& logits) const {
  const float cap = config_.final_softcap;
  if (cap > 0)
    for (float& z : logits) z = cap * std::tanh(z / cap);
}

void Transformer::layers_and_head(const Batch& batch, std::span<KvCache* const> caches, int max_visible,
                                  std::vector<float>& logits) {
  const ModelConfig& c = config_;
  const int64_t E = c.n_embd;
  const int nt = n_threads_;
  Workspace& w = ws_;
  auto grow = [](std::vector<float>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  };
  StepExecutor ex{
      nt,       w.scratch.data(),      w.scores.data(), max_visible, int64_t{c.n_head} * c.head_dim,
      c.n_head, gated_activation_of(c)};
  for (int il = 0; il < c.n_layer; ++il) run_block(ex, batch, caches, il, w.x.data(), w.h.data(), w.h.data());

  // Final norm and LM head, only for the rows that asked.
  const int64_t n_out = batch.n_logits();
  grow(w.out_hidden, n_out * E);
  norm_output_rows(batch, w.x.data());
  if (n_out > 0) {
    grow(w.scratch, kernels::linear_scratch_floats(weights_.output, n_out, nt));
    logits.resize(static_cast<size_t>(n_out * c.n_vocab));
    kernels::linear_forward(logits.data(), c.n_vocab, w.out_hidden.data(), E, weights_.output, nullptr, n_out,
                            w.scratch.data(), nt);
    cap_logits(logits);
  }
}

}  // namespace gpstream::model
