// `gpstream generate -m MODEL --ids 1,2,3 --max-new N`: greedy decoding of token ids with the KV cache.
#include <algorithm>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/install_paths.h"

namespace gpstream::cli {
namespace {

int run_generate(int argc, char** argv) {
  CLI::App app{"Greedy-decode token ids (prints the generated ids, comma-separated)", "gpstream generate"};
  std::string model_path, ids_s;
  int max_new = 16, threads = 0;
  bool stop_at_eos = true;
  app.add_option("-m,--model", model_path, "Hugging Face model directory or .gguf file")
      ->required()
      ->transform(resolve_model_name);
  app.add_option("--ids", ids_s, "comma-separated prompt token ids")->required();
  app.add_option("--max-new", max_new, "number of tokens to generate")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_flag("!--no-eos-stop", stop_at_eos, "keep generating after an end-of-sequence token");
  app.add_option("-t,--threads", threads, "threads (default: all cores)");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  auto ids = parse_int_list(ids_s, "--ids");
  if (!ids) return std::fprintf(stderr, "gpstream generate: %s\n", ids.error().message().c_str()), kExitUsage;

  auto tf = model::Transformer::load(model_path, threads);
  if (!tf) return fail("generate", tf.error());
  const auto& cfg = (*tf)->config();
  model::KvCache cache(cfg);
  std::vector<float> logits;
  std::vector<int32_t> feed = *ids;
  std::vector<int32_t> out;
  int pos = 0;
  for (int step = 0; step < max_new; ++step) {
    model::Batch batch;
    for (size_t i = 0; i < feed.size(); ++i, ++pos)
      batch.add({.id = feed[i],
                 .pos = static_cast<float>(pos),
                 .group = model::Group::Source,
                 .n_src = pos + 1,
                 .logits = i + 1 == feed.size()});
    if (Status s = (*tf)->forward(batch, cache, logits); !s.ok()) return fail("generate", s.error());
    const int32_t next =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(next);
    if (stop_at_eos &&
        std::find(cfg.eos_token_ids.begin(), cfg.eos_token_ids.end(), next) != cfg.eos_token_ids.end())
      break;
    feed = {next};
  }
  for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
  std::printf("\n");
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("generate", "greedy-decode token ids",
                 "gpstream generate -m models/gpstream-en-fr --ids 1,250,38 --max-new 8",
                 gpstream::cli::run_generate);
