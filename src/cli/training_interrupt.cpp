// The interrupted-training line and exit status (training_interrupt.h).
#include "cli/training_interrupt.h"

#include <cstdio>

#include "train/interrupt.h"
#include "train/run_folder.h"

namespace gpstream::cli {

int report_interrupted(const std::string& command, int signal, const std::string& output_dir) {
  // The run's newest checkpoint is the one the interrupted loop has just written.
  auto saved = train::resolve_resume_checkpoint(output_dir);
  std::fprintf(stderr, "gpstream %s: interrupted by %s: saved checkpoint %s; continue with --resume %s\n",
               command.c_str(), train::interrupt_signal_name(signal).c_str(),
               saved.ok() ? saved->c_str() : "(none found)", output_dir.c_str());
  return train::interrupted_exit_status(signal);
}

}  // namespace gpstream::cli
