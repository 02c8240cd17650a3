// Stopping a training run cleanly on SIGINT or SIGTERM (`gpstream train`, `gpstream train-speech`). While an
// InterruptHandler lives, the first of these signals is only recorded (an async-signal-safe store); the
// training-run harness polls interrupt_signal() before each step (train/training_run.h,
// RunControl::interrupt), writes a checkpoint and returns, and the command exits with
// interrupted_exit_status(). The handler is one-shot: a second signal of the same kind ends the process at
// once (checkpoints are written atomically, so the ones on disk stay intact). It does not stop a step midway.
#pragma once

#include <string>

namespace gpstream::train {

// Installs the SIGINT and SIGTERM handlers for its lifetime (and restores the previous ones after); one at a
// time per process.
class InterruptHandler {
 public:
  InterruptHandler();
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
};

// The signal an InterruptHandler recorded (SIGINT or SIGTERM; the first one), 0 when none.
int interrupt_signal();

// The exit status of a command whose training was interrupted by `signal` and saved: 128 + signal, as a
// shell reports a process killed by it (130 for SIGINT, 143 for SIGTERM).
int interrupted_exit_status(int signal);

// "SIGINT", "SIGTERM", or "signal N".
std::string interrupt_signal_name(int signal);

}  // namespace gpstream::train
