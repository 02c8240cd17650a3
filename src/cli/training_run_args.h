// The options `gpstream train` and `gpstream train-speech` share (the config file, --resume, -t,
// --max-minutes,
// --export-only) and how they override the config and fill the training run's options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gpstream::cli {

struct TrainingRunArgs {
  std::string config_path, resume;
  int threads = 0;          // 0: the config's
  double max_minutes = -1;  // < 0: the config's
  bool export_only = false;

  void add_to(CLI::App& app);
  template <typename Config>
  void override_config(Config& cfg) const {
    if (threads > 0) cfg.threads = threads;
    if (max_minutes >= 0) cfg.max_minutes = max_minutes;
  }
  template <typename RunOptions>
  void fill(RunOptions& opt) const {
    opt.resume = resume;
    opt.export_only = export_only;
  }
};

}  // namespace gpstream::cli
