// What `gpstream train` and `gpstream train-speech` say and return when SIGINT or SIGTERM stopped the
// training (train/interrupt.h): one line on stderr naming the checkpoint written and how to continue, then
// the exit status 130 or 143.
#pragma once

#include <string>

namespace gpstream::cli {

// "gpstream <command>: interrupted by SIGINT: saved checkpoint OUT/checkpoints/checkpoint-…bin; continue with
// --resume OUT" on stderr; returns train::interrupted_exit_status(signal).
int report_interrupted(const std::string& command, int signal, const std::string& output_dir);

}  // namespace gpstream::cli
