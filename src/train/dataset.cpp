// Datasets and batching.
#include "train/dataset.h"

#include <algorithm>
#include <fstream>
#include <numeric>

#include "train/epoch_sampling.h"

namespace gpstream::train {

Result<PairFile> read_pairs_tsv(const std::string& path, int64_t max_pairs) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open " + path);
  PairFile f;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos)
      return format_error(path + ":" + std::to_string(lineno) + ": expected source<TAB>target");
    Pair p{line.substr(0, tab), line.substr(tab + 1)};
    if (p.source.find_first_not_of(" \t") == std::string::npos ||
        p.target.find_first_not_of(" \t") == std::string::npos) {
      ++f.skipped_empty;
      continue;
    }
    f.pairs.push_back(std::move(p));
    if (max_pairs > 0 && static_cast<int64_t>(f.pairs.size()) >= max_pairs) break;
  }
  return f;
}

std::optional<TrainMode> parse_train_mode(const std::string& n) {
  if (n == "batch") return TrainMode::Batch;
  if (n == "group") return TrainMode::Group;
  if (n == "batch-stream") return TrainMode::BatchStream;
  if (n == "interleaved") return TrainMode::Interleaved;
  if (n == "interleaved-blocked") return TrainMode::InterleavedBlocked;
  return std::nullopt;
}

const char* train_mode_name(TrainMode m) {
  switch (m) {
    case TrainMode::Batch:
      return "batch";
    case TrainMode::Group:
      return "group";
    case TrainMode::BatchStream:
      return "batch-stream";
    case TrainMode::Interleaved:
      return "interleaved";
    case TrainMode::InterleavedBlocked:
      return "interleaved-blocked";
  }
  return "";
}

stream::Paradigm train_mode_paradigm(TrainMode m) {
  switch (m) {
    case TrainMode::Batch:
      return stream::Paradigm::Offline;
    case TrainMode::Group:
      return stream::Paradigm::Group;
    case TrainMode::BatchStream:
      return stream::Paradigm::BatchStream;
    case TrainMode::Interleaved:
      return stream::Paradigm::Interleaved;
    case TrainMode::InterleavedBlocked:
      return stream::Paradigm::InterleavedBlocked;
  }
  return stream::Paradigm::Group;
}

LayoutFn codec_layout_fn(const stream::SegmentCodec& codec, stream::PositionsRemoved positions_removed) {
  return [&codec, positions_removed](const Pair& p, stream::Paradigm paradigm, int k, stream::Phi phi) {
    stream::LayoutOptions o;
    o.paradigm = paradigm;
    o.k = k;
    o.phi = phi;
    o.positions_removed = positions_removed;
    o.n_vocab = codec.vocab_size();
    return stream::make_layout(codec, p.source, p.target, o);
  };
}

void append_causal(TrainSequence& seq, const stream::Layout& layout, bool label_all) {
  const auto base = static_cast<int32_t>(seq.size());
  const auto& rows = layout.rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    int32_t label = rows[i].label;
    // Every row predicts the next one; the last row keeps its own label (the target end marker, which is
    // predicted but never fed, so it is not a row).
    if (label_all && i + 1 < rows.size()) label = rows[i + 1].id;
    const int32_t r = base + static_cast<int32_t>(i);
    seq.push(rows[i].id, static_cast<float>(r), 0, r + 1, 0, label);
  }
}

TrainSequence sequence_from_layout(const stream::Layout& layout) {
  TrainSequence s;
  for (const stream::LayoutRow& r : layout.rows) {
    s.push(r.id, r.pos, static_cast<uint8_t>(r.group), r.n_src, r.n_tgt, r.label);
    if (layout.n_embedding_rows > 0) s.input_row.push_back(r.embedding);
  }
  return s;
}

Result<Dataset> Dataset::create(std::vector<Pair> pairs, LayoutFn layout, DataOptions o) {
  if (o.k_min < 1 || o.k_max < o.k_min) return invalid_argument("data: need 1 <= k_min <= k_max");
  if (o.max_seq < 2 || o.batch_tokens < o.max_seq)
    return invalid_argument("data: need max_seq >= 2 and batch_tokens >= max_seq");
  if (o.pack && o.mode != TrainMode::Batch) return invalid_argument("data: packing is for batch mode only");
  if (o.positions_removed != stream::PositionsRemoved::None && o.mode == TrainMode::Batch)
    return invalid_argument("data: positions_removed is for the streaming modes, not batch");
  Dataset d;
  d.layout_ = std::move(layout);
  d.opts_ = o;
  // Lengths do not depend on k (every token is one cache row in every paradigm).
  for (Pair& p : pairs) {
    auto l = d.layout_(p, train_mode_paradigm(o.mode), o.k_max, o.phi);
    if (!l.ok()) return l.error().with_context("laying out \"" + p.source.substr(0, 60) + "\"");
    const auto n = static_cast<int64_t>(l->rows.size());
    if (n > o.max_seq) {
      ++d.dropped_;
      continue;
    }
    d.pairs_.push_back(std::move(p));
    d.lengths_.push_back(n);
  }
  if (d.pairs_.empty())
    return invalid_argument("data: no example fits in max_seq = " + std::to_string(o.max_seq));
  return d;
}

int64_t Dataset::n_tokens() const {
  return std::accumulate(lengths_.begin(), lengths_.end(), int64_t{0});
}

int Dataset::k_for(int64_t epoch, size_t example) const {
  return sample_k(opts_.seed, epoch, example, opts_.k_min, opts_.k_max);
}

Result<TrainSequence> Dataset::example_sequence(size_t example, int k) const {
  GPS_ASSIGN(stream::Layout l, layout_(pairs_[example], train_mode_paradigm(opts_.mode), k, opts_.phi));
  if (opts_.mode == TrainMode::Batch) {
    TrainSequence s;
    append_causal(s, l, opts_.loss_on_all);
    return s;
  }
  return sequence_from_layout(l);
}

void Dataset::plan_epoch(int64_t epoch) {
  if (planned_epoch_ == epoch) return;
  planned_epoch_ = epoch;
  plan_.clear();
  EpochShuffle shuffle(opts_.seed, epoch);
  std::vector<size_t> order = shuffle.order(pairs_.size());
  // Sequences: packed runs (batch mode) or single examples.
  std::vector<std::vector<size_t>> seqs;
  std::vector<int64_t> seq_len;
  if (opts_.pack) {
    std::vector<size_t> cur;
    int64_t len = 0;
    for (size_t e : order) {
      if (len + lengths_[e] > opts_.max_seq && !cur.empty()) {
        seqs.push_back(cur);
        seq_len.push_back(len);
        cur.clear();
        len = 0;
      }
      cur.push_back(e);
      len += lengths_[e];
    }
    if (!cur.empty()) seqs.push_back(cur), seq_len.push_back(len);
  } else {
    // Length buckets: sort chunks of ~64 batches' worth by length so a batch holds similar lengths.
    const size_t chunk = 256;
    for (size_t b = 0; b < order.size(); b += chunk) {
      const size_t e = std::min(order.size(), b + chunk);
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(b),
                       order.begin() + static_cast<std::ptrdiff_t>(e),
                       [&](size_t x, size_t y) { return lengths_[x] < lengths_[y]; });
    }
    for (size_t e : order) {
      seqs.push_back({e});
      seq_len.push_back(lengths_[e]);
    }
  }
  // Batches: consecutive sequences up to batch_tokens, then a shuffled batch order.
  std::vector<std::vector<size_t>> cur;
  int64_t tok = 0;
  std::vector<std::vector<std::vector<size_t>>> batches;
  for (size_t s = 0; s < seqs.size(); ++s) {
    if (tok + seq_len[s] > opts_.batch_tokens && !cur.empty()) {
      batches.push_back(std::move(cur));
      cur.clear();
      tok = 0;
    }
    cur.push_back(seqs[s]);
    tok += seq_len[s];
  }
  if (!cur.empty()) batches.push_back(std::move(cur));
  shuffle.shuffle(batches);
  plan_ = std::move(batches);
}

int64_t Dataset::batches_per_epoch() {
  plan_epoch(pos_.epoch);
  return static_cast<int64_t>(plan_.size());
}

Result<TrainBatch> Dataset::next_batch() {
  plan_epoch(pos_.epoch);
  if (pos_.batch >= static_cast<int64_t>(plan_.size())) {
    pos_ = {pos_.epoch + 1, 0};
    plan_epoch(pos_.epoch);
  }
  TrainBatch b;
  for (const std::vector<size_t>& seq : plan_[static_cast<size_t>(pos_.batch)]) {
    if (seq.size() == 1) {
      GPS_ASSIGN(TrainSequence s, example_sequence(seq[0], k_for(pos_.epoch, seq[0])));
      b.seqs.push_back(std::move(s));
      continue;
    }
    TrainSequence packed;
    for (size_t e : seq) {
      GPS_ASSIGN(stream::Layout l, layout_(pairs_[e], stream::Paradigm::Offline, opts_.k_max, opts_.phi));
      append_causal(packed, l, opts_.loss_on_all);
    }
    b.seqs.push_back(std::move(packed));
  }
  ++pos_.batch;
  return b;
}

Result<std::vector<TrainBatch>> Dataset::all_batches() {
  std::vector<size_t> order(pairs_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return lengths_[x] < lengths_[y]; });
  std::vector<TrainBatch> out;
  TrainBatch cur;
  int64_t tok = 0;
  for (size_t e : order) {
    if (tok + lengths_[e] > opts_.batch_tokens && !cur.seqs.empty()) {
      out.push_back(std::move(cur));
      cur = {};
      tok = 0;
    }
    GPS_ASSIGN(TrainSequence s, example_sequence(e, k_for(-1, e)));
    tok += static_cast<int64_t>(s.size());
    cur.seqs.push_back(std::move(s));
  }
  if (!cur.seqs.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace gpstream::train
