// `gpstream logits -m MODEL --ids 1,2,3 [--positions 0,1,2] [--all]`: logits of a causal forward as JSON
// (the last row, or every row with --all). A debugging command for users and tests. JSON has no NaN or
// infinity, so a non-finite logit (a broken model, an overflow) is written as null: the output stays
// JSON.
#include <cmath>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/install_paths.h"

namespace gpstream::cli {
namespace {

int run_logits(int argc, char** argv) {
  CLI::App app{"Print the logits of a causal forward pass as JSON (a non-finite logit, NaN or ±inf, as null)",
               "gpstream logits"};
  std::string model_path, ids_s, pos_s;
  bool all = false;
  int threads = 0;
  app.add_option("-m,--model", model_path, "Hugging Face model directory or .gguf file")
      ->required()
      ->transform(resolve_model_name);
  app.add_option("--ids", ids_s, "comma-separated token ids")->required();
  app.add_option("--positions", pos_s, "comma-separated (real-valued) positions; default 0,1,2,...");
  app.add_flag("--all", all, "print every row's logits (a list of rows)");
  app.add_option("-t,--threads", threads, "threads (default: all cores)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;

  auto ids = parse_int_list(ids_s, "--ids");
  if (!ids) return std::fprintf(stderr, "gpstream logits: %s\n", ids.error().message().c_str()), kExitUsage;
  std::vector<float> pos;
  if (!pos_s.empty()) {
    auto p = parse_float_list(pos_s, "--positions");
    if (!p) return std::fprintf(stderr, "gpstream logits: %s\n", p.error().message().c_str()), kExitUsage;
    pos = *p;
    if (pos.size() != ids->size()) {
      std::fprintf(stderr, "gpstream logits: --positions has %zu values for %zu ids\n", pos.size(),
                   ids->size());
      return kExitUsage;
    }
  } else {
    for (size_t i = 0; i < ids->size(); ++i) pos.push_back(static_cast<float>(i));
  }
  auto tf = model::Transformer::load(model_path, threads);
  if (!tf) return fail("logits", tf.error());
  model::KvCache cache((*tf)->config());
  model::Batch batch;
  for (size_t i = 0; i < ids->size(); ++i)
    batch.add({.id = (*ids)[i],
               .pos = pos[i],
               .group = model::Group::Source,
               .n_src = static_cast<int>(i) + 1,
               .logits = all || i + 1 == ids->size()});
  std::vector<float> logits;
  if (Status s = (*tf)->forward(batch, cache, logits); !s.ok()) return fail("logits", s.error());
  const int64_t V = (*tf)->config().n_vocab;
  const int64_t rows = static_cast<int64_t>(logits.size()) / V;
  std::string out = all ? "[" : "";
  for (int64_t r = 0; r < rows; ++r) {
    out += r ? ",[" : "[";
    for (int64_t i = 0; i < V; ++i) {
      if (i) out += ',';
      const float x = logits[r * V + i];
      out += std::isfinite(x) ? format_float(x) : "null";
    }
    out += ']';
  }
  if (all) out += ']';
  std::printf("%s\n", out.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("logits", "print a causal forward's logits as JSON (debugging)",
                 "gpstream logits -m models/gpstream-en-fr --ids 1,250,38", gpstream::cli::run_logits);
