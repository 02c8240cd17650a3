// `gpstream attention -m MODEL [--paradigm P] [-k K] "source sentence"`: the attention of a model over one
// sentence and its translation, as an SVG heat map (the paper's Figure 3). The translation is the model's own
// under the paradigm and wait-k (or --target's text); the pair is laid out as that paradigm streams it (the
// layout function, gpe.md §8.1) and run through one training forward, whose attention probabilities are
// averaged over the heads and over the layers (or --layer's). train/attention_map.h draws it.
#include <cstdio>
#include <fstream>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "eval/simultaneous.h"
#include "io/safetensors.h"
#include "train/attention_map.h"
#include "util/mapped_file.h"

namespace gpstream::cli {
namespace {

constexpr size_t kMaxRows = 1024;  // rows of the laid-out pair: a sentence, not a document

int run_attention(int argc, char** argv) {
  CLI::App app{"Draw a model's attention over a sentence and its translation as an SVG heat map",
               "gpstream attention"};
  StreamCli o;
  int k = 0, layer = -1;
  std::string source, target, output = "attention.svg", json_path, title;
  bool all_rows = false, has_target = false;
  add_stream_options(app, o);
  app.add_option("-k,--wait-k", k, "wait-k lag in source words (default: the model's)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("source", source, "the source sentence")->required();
  app.add_option("--target", target,
                 "the target to lay out (e.g. a reference; default: the model's own translation)");
  app.add_option("--layer", layer, "draw one layer (0-based; default: the mean over the layers)")
      ->check(CLI::Range(0, 100000));
  app.add_flag("--all-rows", all_rows, "also draw the source rows' attention (default: the target rows')");
  app.add_option("-o,--output", output, "the SVG file (default attention.svg)");
  app.add_option("--json", json_path, "also write the map as JSON: rows (text, group, position), weights");
  app.add_option("--title", title, "the figure's title (default: model, paradigm, k and layer)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  has_target = app.count("--target") > 0;

  auto m = load_stream_model(o);
  if (!m) return fail("attention", m.error());
  auto so = session_options(o, *m, k, o.paradigm);
  if (!so) return std::fprintf(stderr, "gpstream attention: %s\n", so.error().message().c_str()), kExitUsage;
  if (so->paradigm == stream::Paradigm::Reencode || so->paradigm == stream::Paradigm::ReencodePos) {
    std::fprintf(
        stderr,
        "gpstream attention: %s re-encodes its cache as it goes, so no single layout holds its rows; "
        "draw batch-stream instead\n",
        stream::paradigm_name(so->paradigm));
    return kExitUsage;
  }
  if (!has_target) {
    auto rec = eval::evaluate_sentence(*m->model, *m->codec, *so, {source, ""}, {});
    if (!rec) return fail("attention", rec.error());
    target = rec->prediction;
  }
  stream::LayoutOptions lo;
  lo.paradigm = so->paradigm;
  lo.k = so->k;
  lo.phi = so->phi;
  lo.n_vocab = m->model->config().n_vocab;
  lo.end_after_source = so->end_after_source;
  lo.positions_removed = so->positions_removed;
  auto layout = stream::make_layout(*m->codec, source, target, lo);
  if (!layout) return fail("attention", layout.error());
  if (layout->rows.size() > kMaxRows) {
    std::fprintf(stderr, "gpstream attention: the pair lays out as %zu rows; at most %zu are drawn\n",
                 layout->rows.size(), kMaxRows);
    return kExitUsage;
  }

  // The training forward keeps every layer's attention probabilities: built from the model's own tensors.
  auto config = model::load_hf_config(o.model);
  if (!config)
    return fail("attention", config.error().with_context("a Hugging Face model directory is needed"));
  auto tensors = io::read_safetensors_dir(o.model);
  if (!tensors) return fail("attention", tensors.error());
  const auto rows = static_cast<int64_t>(layout->rows.size());
  auto tm = train::TrainModel::create(*config, *tensors, train::LoraOptions{}, 0,
                                      train::TrainShape{rows, rows}, o.threads);
  if (!tm) return fail("attention", tm.error());
  auto map =
      train::attention_map(**tm, *m->codec, *layout, layer >= 0 ? std::optional<int>(layer) : std::nullopt);
  if (!map) return fail("attention", map.error());

  train::AttentionSvgOptions svg;
  svg.source_queries = all_rows;
  svg.title = !title.empty()
                  ? title
                  : std::string(stream::paradigm_name(so->paradigm)) +
                        (so->paradigm == stream::Paradigm::Offline ? "" : ", k = " + std::to_string(so->k)) +
                        (layer >= 0 ? ", layer " + std::to_string(layer) : ", mean over layers") +
                        ", heads averaged";
  const std::string text = train::render_attention_svg(*map, svg);
  if (Status st = write_file_atomic(output, std::as_bytes(std::span(text))); !st.ok())
    return fail("attention", st.error());
  if (!json_path.empty()) {
    const std::string j = train::attention_map_json(*map);
    if (Status st = write_file_atomic(json_path, std::as_bytes(std::span(j))); !st.ok())
      return fail("attention", st.error());
  }
  std::fprintf(stderr, "gpstream attention: %s (%zu rows: %d source, %d target); target: %s\n",
               output.c_str(), layout->rows.size(), layout->n_source_rows, layout->n_target_rows,
               target.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND(
    "attention",
    "draw a model's attention over a sentence and its translation as an SVG heat map (paper Figure 3)",
    "gpstream attention -m models/gpstream-en-fr --paradigm group -k 3 \"Open the file.\" -o a.svg",
    gpstream::cli::run_attention);
