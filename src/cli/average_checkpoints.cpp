// `gpstream average-checkpoints -o OUT.bin CKPT.bin...`: writes a checkpoint whose parameters are the mean
// of the given checkpoints' (train/checkpoint_average.h); `gpstream train[-speech] CONFIG --resume OUT.bin`
// then exports it (with the config's steps at the checkpoint's step) or trains on from it.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "train/checkpoint_average.h"

namespace gpstream::cli {
namespace {

int run_average_checkpoints(int argc, char** argv) {
  CLI::App app{"Average the parameters of checkpoints of one training run (docs/training.md)",
               "gpstream average-checkpoints"};
  std::vector<std::string> inputs;
  std::string output;
  app.add_option("checkpoints", inputs, "checkpoint files of one run (checkpoints/checkpoint-<step>.bin)")
      ->required();
  app.add_option("-o,--output", output, "the averaged checkpoint to write")->required();
  if (auto rc = parse_args(app, argc, argv)) return *rc;

  auto avg = train::average_checkpoints(inputs);
  if (!avg) return fail("average-checkpoints", avg.error());
  if (Status s = train::write_checkpoint(output, *avg); !s.ok())
    return fail("average-checkpoints", s.error());
  std::printf(
      "%s: the mean of %zu checkpoints, %zu parameters; optimizer state and step (%lld) of the newest\n",
      output.c_str(), inputs.size(), avg->values.size(), static_cast<long long>(avg->step));
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("average-checkpoints", "average the parameters of checkpoints of one training run",
                 "gpstream average-checkpoints -o avg.bin runs/en-fr/step-300.bin runs/en-fr/step-400.bin",
                 gpstream::cli::run_average_checkpoints);
