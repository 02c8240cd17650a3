// Training data: TSV pairs → laid-out examples → micro-batches. Each pair is laid out by the stream
// layer's layout function (gpe.md §8.1: ids in cache order, positions, visibility, labels), so training
// and inference share one definition of every paradigm. Modes (gpe.md §7): `batch` — the offline layout
// (φ = S) as one causal sequence, optionally packing consecutive examples into long sequences with
// consecutive positions (pretraining; position offsets up to the pack length are then in distribution);
// `group`, `batch-stream`, `interleaved`, `interleaved-blocked` — one sequence per example, k fixed or
// drawn per example from [k_min, k_max] (multi-k). Batches are length-bucketed and shuffled per epoch,
// all from the seed, so a data position (epoch, batch) is enough to resume exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stream/codec.h"
#include "stream/layout.h"
#include "train/train_model.h"

namespace gpstream::train {

struct Pair {
  std::string source, target;
};

struct PairFile {
  std::vector<Pair> pairs;
  int64_t skipped_empty = 0;  // lines with an empty side (not used)
};

// Reads `source<TAB>target` lines (at most max_pairs if > 0). A line without a tab is an error naming
// the file and line; lines with an empty side are skipped and counted.
Result<PairFile> read_pairs_tsv(const std::string& path, int64_t max_pairs = 0);

enum class TrainMode { Batch, Group, BatchStream, Interleaved, InterleavedBlocked };
std::optional<TrainMode> parse_train_mode(const std::string& name);
const char* train_mode_name(TrainMode m);
stream::Paradigm train_mode_paradigm(TrainMode m);  // batch → offline

// The plug point for layouts: (pair, paradigm, k, φ) → layout. Default: stream::make_layout over a codec.
using LayoutFn = std::function<Result<stream::Layout>(const Pair&, stream::Paradigm, int k, stream::Phi)>;
LayoutFn codec_layout_fn(const stream::SegmentCodec& codec,
                         stream::PositionsRemoved positions_removed = stream::PositionsRemoved::None);

struct DataOptions {
  TrainMode mode = TrainMode::Batch;
  int k_min = 5, k_max = 5;
  stream::Phi phi;        // target start for group mode (batch mode always uses φ = S)
  bool pack = false;      // batch mode: pack consecutive examples into sequences of up to max_seq tokens
  int64_t max_seq = 512;  // longest sequence; longer examples are dropped (counted)
  int64_t batch_tokens = 2048;  // tokens per micro-batch (sum of sequence lengths)
  bool loss_on_all = false;     // batch mode: loss on every next token (pretraining), not only the target
  // Streaming modes: groups whose rows all sit at position 0 (the paper's Table 2 ablation); the layout
  // function must apply it (codec_layout_fn does).
  stream::PositionsRemoved positions_removed = stream::PositionsRemoved::None;
  uint64_t seed = 1;
};

struct DataPosition {
  int64_t epoch = 0;
  int64_t batch = 0;  // next batch within the epoch
};

class Dataset {
 public:
  // Lays out every pair once (to know lengths). Errors: bad options, layout failures.
  static Result<Dataset> create(std::vector<Pair> pairs, LayoutFn layout, DataOptions options);

  // The next micro-batch (advances the position; wraps to the next epoch).
  Result<TrainBatch> next_batch();
  DataPosition position() const { return pos_; }
  void seek(DataPosition p) { pos_ = p; }
  int64_t batches_per_epoch();
  // Every example once, in fixed order (k from the seed), for dev loss.
  Result<std::vector<TrainBatch>> all_batches();

  size_t n_examples() const { return pairs_.size(); }
  int64_t n_dropped() const { return dropped_; }
  int64_t n_tokens() const;
  const DataOptions& options() const { return opts_; }

 private:
  Dataset() = default;
  int k_for(int64_t epoch, size_t example) const;
  Result<TrainSequence> example_sequence(size_t example, int k) const;
  void plan_epoch(int64_t epoch);

  std::vector<Pair> pairs_;
  std::vector<int64_t> lengths_;
  LayoutFn layout_;
  DataOptions opts_;
  int64_t dropped_ = 0;
  DataPosition pos_;
  int64_t planned_epoch_ = -1;
  // Planned epoch: batches of sequences, each sequence a list of examples (packing) or one example.
  std::vector<std::vector<std::vector<size_t>>> plan_;
};

// Appends a layout as one causal sequence (all rows in the source group, positions continuing from
// the sequence's length): the batch-mode form. label_all: every row predicts the layout's next row.
void append_causal(TrainSequence& seq, const stream::Layout& layout, bool label_all);
// A layout as its own sequence (streaming modes). Audio rows get input_row = their chunk row index; the
// caller fills `inputs` with the encoder rows.
TrainSequence sequence_from_layout(const stream::Layout& layout);

}  // namespace gpstream::train
