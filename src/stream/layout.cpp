// Layouts by forced simulation over a recording model.
#include "stream/layout.h"

#include <algorithm>
#include <array>
#include <functional>

#include "stream/session.h"
#include "tokenizer/segment_encoder.h"

namespace gpstream::stream {
namespace {

constexpr int kRecordingEmbd = 2;  // the recording model's n_embd (width of the audio rows it is given)

// A ForwardModel that computes nothing: it keeps, for every cache row, the token it came from, its
// visibility and its arrival order, and hands back a dummy logits row (forced sessions never read it).
class RecordingModel final : public model::ForwardModel {
 public:
  explicit RecordingModel(int n_vocab) {
    config_.n_vocab = n_vocab;
    config_.n_embd = kRecordingEmbd;
    config_.n_ff = 2;
    config_.n_layer = 1;
    config_.n_head = 1;
    config_.n_head_kv = 1;
    config_.head_dim = 2;
    rope_ = model::RopeFrequencies::plain({1.0f}, 2);
  }
  const model::ModelConfig& config() const override { return config_; }
  const model::RopeFrequencies& rope() const override { return rope_; }

  Status forward(const model::Batch& batch, std::span<model::KvCache* const> caches,
                 std::vector<float>& logits) override {
    model::KvCache& cache = *caches[0];
    for (int g = 0; g < 2; ++g) rows_[g].resize(cache.rows(static_cast<model::Group>(g)));  // truncations
    for (const model::BatchToken& t : batch.tokens) {
      GPS_TRY(cache.reserve(t.group, 1));
      cache.push_row(t.group, t.pos);
      // Audio rows arrive once each, in chunk order (gpe.md §8.3), so arrival numbers them.
      const int32_t embedding = t.embedding >= 0 ? embedding_rows_++ : -1;
      rows_[static_cast<int>(t.group)].push_back({t, arrival_++, embedding});
    }
    logits.assign(static_cast<size_t>(batch.n_logits()), 0.0f);
    return {};
  }

  struct Row {
    model::BatchToken token;
    int64_t arrival;
    int32_t embedding;  // index among all audio rows, or -1
  };
  std::array<std::vector<Row>, 2> rows_;

 private:
  model::ModelConfig config_;
  model::RopeFrequencies rope_;
  int64_t arrival_ = 0;
  int32_t embedding_rows_ = 0;
};

}  // namespace

model::Batch Layout::to_batch() const {
  model::Batch b;
  for (const LayoutRow& r : rows) {
    b.add({.id = r.id,
           .pos = r.pos,
           .group = r.group,
           .n_src = r.n_src,
           .n_tgt = r.n_tgt,
           .logits = true,
           .embedding = r.embedding});
  }
  return b;
}

Result<model::Batch> Layout::to_batch(std::span<const float> source_embeddings, int width) const {
  if (source_embeddings.size() !=
          static_cast<size_t>(n_embedding_rows) * static_cast<size_t>(std::max(width, 0)) ||
      (n_embedding_rows > 0 && width <= 0))
    return invalid_argument("layout: " + std::to_string(n_embedding_rows) + " audio rows need " +
                            std::to_string(n_embedding_rows) + " × width floats (width " +
                            std::to_string(width) + ", got " + std::to_string(source_embeddings.size()) +
                            ")");
  model::Batch b = to_batch();
  if (n_embedding_rows > 0) {
    b.embeddings.assign(source_embeddings.begin(), source_embeddings.end());
    b.embedding_width = width;
  }
  return b;
}

namespace {

// Runs a forced Session over a recording model; `push` gives it the whole source, then end_source.
Result<Layout> simulate(const SegmentCodec& codec, std::string_view target, const LayoutOptions& o,
                        const std::function<Status(Session&)>& push) {
  if (o.paradigm == Paradigm::Reencode || o.paradigm == Paradigm::ReencodePos)
    return invalid_argument(std::string("paradigm ") + paradigm_name(o.paradigm) +
                            " has no single training layout; train with batch-stream (gpe.md §6)");
  // Target tokens, per segment.
  std::vector<int32_t> forced;
  bool first = true;
  for (const std::string& w : tokenizer::split_words(target)) {
    GPS_ASSIGN(auto ids, codec.encode(SegmentKind::TargetWord, w, first));
    forced.insert(forced.end(), ids.begin(), ids.end());
    first = false;
  }

  RecordingModel rec(o.n_vocab);
  SessionOptions so;
  so.paradigm = o.paradigm;
  so.k = o.k;
  so.end_after_source = o.end_after_source;
  so.phi = o.phi;
  so.positions_removed = o.positions_removed;
  so.forced_target = forced;
  so.max_target_tokens = static_cast<int>(forced.size()) + 1;
  so.max_tokens_per_word = 1 << 20;
  so.max_cache_rows = 1 << 20;
  so.clock = [] { return 0.0; };
  GPS_ASSIGN(auto session, Session::create(rec, codec, so));
  GPS_TRY(push(*session));
  GPS_TRY(session->end_source());
  Layout layout;
  for (;;) {
    GPS_ASSIGN(Event e, session->step());
    if (e.kind == EventKind::Word) layout.delays.push_back(e.delay);
    if (e.kind == EventKind::Finished) break;
    GPS_ASSERT(e.kind != EventKind::NeedSource, "forced layout session waiting for source");
  }
  const model::KvCache& cache = session->cache();
  for (int g = 0; g < 2; ++g) rec.rows_[g].resize(cache.rows(static_cast<model::Group>(g)));
  std::vector<std::pair<int64_t, LayoutRow>> all;
  for (int g = 0; g < 2; ++g) {
    const auto group = static_cast<model::Group>(g);
    for (size_t i = 0; i < rec.rows_[g].size(); ++i) {
      const auto& t = rec.rows_[g][i].token;
      const int32_t embedding = rec.rows_[g][i].embedding;
      LayoutRow r{
          embedding >= 0 ? -1 : t.id, embedding, cache.positions(group)[i], group, t.n_src, t.n_tgt, -1};
      if (group == model::Group::Target && i < session->target_row_labels().size())
        r.label = session->target_row_labels()[i];
      all.push_back({rec.rows_[g][i].arrival, r});
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [arrival, r] : all) layout.rows.push_back(r);
  layout.n_source_rows = cache.rows(model::Group::Source);
  layout.n_target_rows = cache.rows(model::Group::Target);
  for (const LayoutRow& r : layout.rows) layout.n_embedding_rows += r.embedding >= 0;
  return layout;
}

}  // namespace

Result<Layout> make_layout(const SegmentCodec& codec, std::string_view source, std::string_view target,
                           const LayoutOptions& o) {
  return simulate(codec, target, o, [&](Session& s) { return s.push_source(source); });
}

Result<Layout> make_layout(const SegmentCodec& codec, std::span<const int> chunk_rows,
                           std::string_view target, const LayoutOptions& o) {
  return simulate(codec, target, o, [&](Session& s) -> Status {
    const int width = kRecordingEmbd;
    for (size_t i = 0; i < chunk_rows.size(); ++i) {
      if (chunk_rows[i] < 1 || chunk_rows[i] > s.options().max_cache_rows)
        return invalid_argument("layout: audio chunk " + std::to_string(i) + " has " +
                                std::to_string(chunk_rows[i]) + " rows (at least 1, at most " +
                                std::to_string(s.options().max_cache_rows) + ")");
      const std::vector<float> zeros(static_cast<size_t>(chunk_rows[i]) * width, 0.0f);
      GPS_TRY(s.push_source_embeddings(zeros, width));
    }
    return {};
  });
}

}  // namespace gpstream::stream
