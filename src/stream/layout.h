// The layout function of gpe.md §8.1: for (source, target, paradigm, k, φ) the token ids in cache
// arrival order, their positions, each row's visibility (source rows, target rows) and its label (the
// target token its logits predict, or none). It is computed by running the real Session in forced mode
// over a recording model, so training (one masked forward over the layout) and inference (the Session)
// cannot disagree: they are the same code path.
//
// Audio sources (docs/speech.md): the source is a sequence of chunks of input embedding rows; only their
// row counts shape the layout. A source row from a chunk carries `embedding`, its index in the chunks'
// rows concatenated in order (id −1); the training forward feeds that encoder output row there.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "model/batch.h"
#include "stream/codec.h"
#include "stream/paradigm.h"

namespace gpstream::stream {

struct LayoutRow {
  int32_t id = 0;          // token id; −1 for an audio row
  int32_t embedding = -1;  // audio row: index into the concatenated chunk rows
  float pos = 0.0f;
  model::Group group = model::Group::Source;
  int n_src = 0;
  int n_tgt = 0;
  int32_t label = -1;  // target token predicted by this row, -1 if the row is not trained
};

struct Layout {
  std::vector<LayoutRow> rows;  // arrival order
  std::vector<int> delays;      // per target word, source units (words or chunks) read when it was written
  int n_source_rows = 0;
  int n_target_rows = 0;
  int n_embedding_rows = 0;  // audio rows (the chunks' rows in total)

  // The rows as a Batch for one full forward (sequence 0), logits on every row. Audio rows point at row
  // `embedding` of the batch's buffer, left empty: fill Batch::embeddings / embedding_width with the
  // chunks' rows concatenated (an encoder's output) before the forward.
  model::Batch to_batch() const;
  // The same with the buffer filled from `source_embeddings` (rows of `width` = n_embd floats); refused
  // when its size is not n_embedding_rows × width.
  Result<model::Batch> to_batch(std::span<const float> source_embeddings, int width) const;
};

struct LayoutOptions {
  Paradigm paradigm = Paradigm::Group;
  int k = 5;
  Phi phi;
  int n_vocab = 0;                // the model's vocabulary size (ids are checked against it)
  bool end_after_source = false;  // the end marker's row sees the whole source (SessionOptions)
  PositionsRemoved positions_removed = PositionsRemoved::None;  // SessionOptions::positions_removed
};

// Target words are encoded per segment (codec); the labels are the target words' tokens and the
// first token of the target end marker. reencode and reencode-pos have no single training layout
// (gpe.md §6) and are refused.
Result<Layout> make_layout(const SegmentCodec& codec, std::string_view source, std::string_view target,
                           const LayoutOptions& options);
// An audio source: chunk_rows[i] rows in chunk i (each at least 1), one unit per chunk (wait-k counts
// chunks).
Result<Layout> make_layout(const SegmentCodec& codec, std::span<const int> chunk_rows,
                           std::string_view target, const LayoutOptions& options);

}  // namespace gpstream::stream
