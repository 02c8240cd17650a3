// See training_run_args.h.
#include "cli/training_run_args.h"

namespace gpstream::cli {

void TrainingRunArgs::add_to(CLI::App& app) {
  app.add_option("config", config_path, "training config (JSON)")->required();
  app.add_option("--resume", resume,
                 "continue from a run folder (its newest checkpoint) or a checkpoint file");
  app.add_option("-t,--threads", threads, "threads (overrides the config)")->check(CLI::Range(1, 1024));
  app.add_option("--max-minutes", max_minutes,
                 "stop once the run's training time, resumes included, reaches this (overrides the config)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_flag("--export-only", export_only,
               "train no step: export the --resume checkpoint (e.g. an averaged one) with this config");
}

}  // namespace gpstream::cli
