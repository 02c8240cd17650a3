#include "train/attention_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "kernels/attention_backward.h"
#include "train/dataset.h"
#include "util/svg.h"
#include "util/text_wrap.h"

namespace gpstream::train {

namespace {

// A token's text for a label: control characters and broken UTF-8 replaced, outer spaces dropped, at most
// `max_chars` code points (then "…"); a token with no visible text shows its id.
std::string token_label(const stream::SegmentCodec& codec, int32_t id, size_t max_chars = 12) {
  std::string text = util::sanitize_for_terminal(codec.decode(std::span<const int32_t>(&id, 1)));
  const size_t b = text.find_first_not_of(' ');
  if (b == std::string::npos) return "#" + std::to_string(id);
  text = text.substr(b, text.find_last_not_of(' ') - b + 1);
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (++chars > max_chars) return text.substr(0, i) + "…";
  }
  return text;
}

}  // namespace

Result<AttentionMap> attention_map(TrainModel& model, const stream::SegmentCodec& codec,
                                   const stream::Layout& layout, std::optional<int> layer) {
  const model::ModelConfig& c = model.config();
  if (layer && (*layer < 0 || *layer >= c.n_layer))
    return invalid_argument("layer " + std::to_string(*layer) + ": the model has layers 0 to " +
                            std::to_string(c.n_layer - 1));
  if (layout.n_embedding_rows > 0) return invalid_argument("attention maps of audio sources are not drawn");
  TrainBatch batch;
  batch.seqs.push_back(sequence_from_layout(layout));
  ForwardOptions fo;
  fo.training = false;
  GPS_TRY(model.forward(batch, fo));
  const size_t n = layout.rows.size();
  AttentionMap map;
  map.layer = layer;
  for (const stream::LayoutRow& r : layout.rows) {
    map.text.push_back(token_label(codec, r.id));
    map.group.push_back(r.group);
    map.position.push_back(r.pos);
  }
  std::vector<double> sum(n * n, 0.0);
  const int first = layer.value_or(0), last = layer.value_or(c.n_layer - 1);
  for (int l = first; l <= last; ++l) {
    const std::vector<float> p = model.attention_probabilities(0, l);
    for (size_t h = 0; h < static_cast<size_t>(c.n_head); ++h)
      for (size_t ij = 0; ij < n * n; ++ij) sum[ij] += p[h * n * n + ij];
  }
  const double count = static_cast<double>(last - first + 1) * c.n_head;
  map.weights.resize(n * n);
  for (size_t ij = 0; ij < n * n; ++ij) map.weights[ij] = static_cast<float>(sum[ij] / count);
  // Visibility from the layout (gpe.md §4), by the trainer's own mask builder (no sliding window: the map
  // shows what the paradigm lets a row see).
  const TrainSequence& seq = batch.seqs.front();
  std::vector<float> mask(n * n);
  kernels::attention_mask_build(mask.data(), seq.groups.data(), seq.n_src.data(), seq.n_tgt.data(),
                                static_cast<int64_t>(n));
  map.visible.resize(n * n);
  for (size_t ij = 0; ij < n * n; ++ij) map.visible[ij] = mask[ij] == 0.0f;
  return map;
}

namespace {

// Source rows first, then target rows, each in cache order.
std::vector<size_t> grouped_order(const AttentionMap& map, bool with_source) {
  std::vector<size_t> order;
  for (model::Group g : {model::Group::Source, model::Group::Target}) {
    if (g == model::Group::Source && !with_source) continue;
    for (size_t i = 0; i < map.n_rows(); ++i)
      if (map.group[i] == g) order.push_back(i);
  }
  return order;
}

// White to dark blue (#08306b) for w in [0, 1].
std::string blue(double w) {
  w = std::clamp(w, 0.0, 1.0);
  auto mix = [&](int from, int to) { return static_cast<int>(std::lround(from + (to - from) * w)); };
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", mix(255, 8), mix(255, 48), mix(255, 107));
  return b;
}

std::string text_element(double x, double y, const std::string& text, const char* anchor, double size,
                         const std::string& extra = "") {
  return "<text x=\"" + util::svg_num(x) + "\" y=\"" + util::svg_num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + util::svg_num(size) + "\"" + extra + ">" + util::svg_escape(text) + "</text>\n";
}

}  // namespace

std::string render_attention_svg(const AttentionMap& map, const AttentionSvgOptions& options) {
  const std::vector<size_t> cols = grouped_order(map, true);
  const std::vector<size_t> rows = grouped_order(map, options.source_queries);
  const size_t n = map.n_rows();
  const double cell = std::clamp(900.0 / static_cast<double>(std::max<size_t>(cols.size(), 1)), 5.0, 16.0);
  const double font = std::min(11.0, cell * 0.8);
  double row_label_w = 0, col_label_w = 0;
  for (size_t i : rows) row_label_w = std::max(row_label_w, util::svg_text_width(map.text[i], font));
  for (size_t j : cols) col_label_w = std::max(col_label_w, util::svg_text_width(map.text[j], font));
  const double title_h = options.title.empty() ? 10 : 30, group_h = 18;
  const double x0 = 40 + row_label_w, y0 = title_h + col_label_w + 8 + group_h;
  const double w = cell * static_cast<double>(cols.size()), h = cell * static_cast<double>(rows.size());
  const double bar_x = x0 + w + 24, width = bar_x + 70, height = y0 + h + 20;
  float vmax = 0;
  for (size_t i : rows)
    for (size_t j : cols) vmax = std::max(vmax, map.weights[i * n + j]);
  if (!(vmax > 0)) vmax = 1;

  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + util::svg_num(width) +
                  "\" height=\"" + util::svg_num(height) + "\" font-family=\"" + util::kSvgFontFamily +
                  "\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!options.title.empty())
    o += text_element(width / 2, 20, options.title, "middle", 14, " class=\"title\"");
  // Group headers over the columns, and the rows' groups at their left.
  size_t n_src_cols = 0;
  for (size_t j : cols) n_src_cols += map.group[j] == model::Group::Source;
  const double split = x0 + cell * static_cast<double>(n_src_cols);
  if (n_src_cols > 0) o += text_element((x0 + split) / 2, y0 - 4, "source rows", "middle", 11);
  if (n_src_cols < cols.size()) o += text_element((split + x0 + w) / 2, y0 - 4, "target rows", "middle", 11);
  for (size_t c = 0; c < cols.size(); ++c) {
    const double cx = x0 + cell * (static_cast<double>(c) + 0.5) + font * 0.35;
    const double cy = y0 - group_h - 4;
    o += text_element(cx, cy, map.text[cols[c]], "start", font,
                      " transform=\"rotate(-90 " + util::svg_num(cx) + " " + util::svg_num(cy) + ")\"");
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const double y = y0 + cell * static_cast<double>(r);
    o += text_element(x0 - 4, y + cell * 0.5 + font * 0.35, map.text[rows[r]], "end", font);
    for (size_t c = 0; c < cols.size(); ++c) {
      const size_t ij = rows[r] * n + cols[c];
      const std::string fill = map.visible[ij] ? blue(map.weights[ij] / vmax) : std::string("#d9d9d9");
      o += "<rect x=\"" + util::svg_num(x0 + cell * static_cast<double>(c)) + "\" y=\"" + util::svg_num(y) +
           "\" width=\"" + util::svg_num(cell) + "\" height=\"" + util::svg_num(cell) + "\" fill=\"" + fill +
           "\"/>\n";
    }
  }
  // The source/target boundary, and the frame.
  o += "<line x1=\"" + util::svg_num(split) + "\" y1=\"" + util::svg_num(y0) + "\" x2=\"" +
       util::svg_num(split) + "\" y2=\"" + util::svg_num(y0 + h) +
       "\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\n";
  o += "<rect x=\"" + util::svg_num(x0) + "\" y=\"" + util::svg_num(y0) + "\" width=\"" + util::svg_num(w) +
       "\" height=\"" + util::svg_num(h) + "\" fill=\"none\" stroke=\"black\" stroke-width=\"0.5\"/>\n";
  // Colour bar: 0 at the bottom, vmax at the top; grey = not visible.
  const double bar_h = std::min(h, 200.0);
  const int steps = 20;
  for (int s = 0; s < steps; ++s) {
    const double v = (static_cast<double>(s) + 0.5) / steps;
    o += "<rect x=\"" + util::svg_num(bar_x) + "\" y=\"" +
         util::svg_num(y0 + bar_h * (1 - static_cast<double>(s + 1) / steps)) + "\" width=\"12\" height=\"" +
         util::svg_num(bar_h / steps + 0.5) + "\" fill=\"" + blue(v) + "\"/>\n";
  }
  char vmax_text[32];
  std::snprintf(vmax_text, sizeof vmax_text, "%.3g", static_cast<double>(vmax));
  o += text_element(bar_x + 16, y0 + 9, vmax_text, "start", 10);
  o += text_element(bar_x + 16, y0 + bar_h, "0", "start", 10);
  o += "<rect x=\"" + util::svg_num(bar_x) + "\" y=\"" + util::svg_num(y0 + bar_h + 10) +
       "\" width=\"12\" height=\"12\" fill=\"#d9d9d9\"/>\n";
  o += text_element(bar_x + 16, y0 + bar_h + 20, "unseen", "start", 10);
  o += "</svg>\n";
  return o;
}

std::string attention_map_json(const AttentionMap& map) {
  nlohmann::ordered_json j;
  j["layer"] = map.layer ? nlohmann::ordered_json(*map.layer) : nlohmann::ordered_json(nullptr);
  j["rows"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < map.n_rows(); ++i)
    j["rows"].push_back({{"text", map.text[i]},
                         {"group", map.group[i] == model::Group::Source ? "source" : "target"},
                         {"position", map.position[i]}});
  j["weights"] = nlohmann::ordered_json::array();
  const size_t n = map.n_rows();
  for (size_t i = 0; i < n; ++i) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (size_t k = 0; k < n; ++k) {
      if (!map.visible[i * n + k]) {
        row.push_back(nullptr);
      } else {
        row.push_back(std::round(static_cast<double>(map.weights[i * n + k]) * 1e6) / 1e6);
      }
    }
    j["weights"].push_back(std::move(row));
  }
  return j.dump() + "\n";
}

}  // namespace gpstream::train
