// `gpstream eval --speech`: the speech-recognition evaluation (eval_speech.cpp), reached from `gpstream eval`
// when --speech is on its command line.
#pragma once

namespace gpstream::cli {

// argv as `gpstream eval` received it (argv[0] = "gpstream eval"); returns the exit code.
int run_eval_speech(int argc, char** argv);

}  // namespace gpstream::cli
