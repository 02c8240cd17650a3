// `gpstream eval --long-form`: the test set as talks translated as unsegmented streams
// (eval/long_form_talks.h), scored by resegmentation, BLEU, chrF and StreamLAAL (eval/long_form.h); reached
// from `gpstream eval`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/cli_util.h"
#include "eval/simultaneous.h"

namespace gpstream::cli {

struct LongFormEvalOptions {
  std::vector<SweepPoint> settings;  // the policy settings swept (eval_settings)
  std::vector<std::string> paradigms;
  double pace = 2.5;         // words/s: the talks' length and the virtual clock
  double talk_minutes = 30;  // each talk lasts at least this long at the pace
  std::string output;        // DIR/<paradigm>-k<k>-long-form/{talk-N.json,scores.tsv}
  bool json = false;
};

// Runs every (paradigm, k); returns the exit code.
int run_eval_long_form(const StreamCli& o, const stream::StreamingModel& m,
                       const std::vector<eval::TestPair>& pairs, const LongFormEvalOptions& options);

}  // namespace gpstream::cli
