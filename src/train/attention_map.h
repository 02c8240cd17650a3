// Attention maps of a laid-out example (gpe.md §8.1), for `gpstream attention` and the paper's Figure 3: one
// training forward (TrainModel) over the layout of a (source, target) pair under a paradigm, then how much
// every row attends to every other row, averaged over the heads (and over the layers, or one layer), drawn
// as an SVG heat map whose axes put the source rows first and the target rows after them, so that maps of
// different paradigms (whose caches order the rows differently) can be set side by side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stream/codec.h"
#include "stream/layout.h"
#include "train/train_model.h"
#include "util/error.h"

namespace gpstream::train {

struct AttentionMap {
  // Per row, in the layout's (cache) order: its token as text, its group and position.
  std::vector<std::string> text;
  std::vector<model::Group> group;
  std::vector<float> position;
  // weights[i * n + j]: how much row i attends to row j (n = text.size()); rows it does not see are 0 and
  // visible[i * n + j] is false there.
  std::vector<float> weights;
  std::vector<bool> visible;
  std::optional<int> layer;  // the layer drawn; unset: the mean over the layers
  size_t n_rows() const { return text.size(); }
};

// The layout's rows must fit the model's TrainShape (one sequence). `layer`: 0-based, or unset for the mean
// over every layer. Errors: a layout of audio rows, a layer past the model's.
Result<AttentionMap> attention_map(TrainModel& model, const stream::SegmentCodec& codec,
                                   const stream::Layout& layout, std::optional<int> layer);

struct AttentionSvgOptions {
  std::string title;
  bool source_queries =
      false;  // also the source rows' attention (rows of the map); default: target rows only
};

// The heat map: one row per query row, one column per key row (source rows, then target rows, each group in
// its order), white (0) to dark blue (the largest weight drawn, given on the colour bar); cells a row cannot
// see are grey. Token texts label the axes.
std::string render_attention_svg(const AttentionMap& map, const AttentionSvgOptions& options);

// The map as JSON: {"layer": L or null, "rows": [{"text", "group": "source"|"target", "position"}...],
// "weights": [[...]...]} (cache order, weights rounded to 6 decimals; invisible cells null).
std::string attention_map_json(const AttentionMap& map);

}  // namespace gpstream::train
