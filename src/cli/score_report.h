// How the scoring commands report: instances left out of the latency means, and the speech scores (WER
// counts, JSON fields) that `gpstream score --speech` and `gpstream eval --speech` print alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/speech_scores.h"

namespace gpstream::cli {

// On stderr: "gpstream COMMAND: N of TOTAL instances have no delays and are left out of the latency
// averages (as SimulEval does): ids..." (nothing when none is skipped).
void report_skipped(const std::string& command, const std::vector<int64_t>& skipped, size_t total);
// "[1, 5, 9]"
std::string skipped_json(const std::vector<int64_t>& skipped);

// "WER: S substitutions, D deletions, I insertions over N reference words (normalisation: basic)"
std::string speech_wer_line(const eval::WerCounts& counts, eval::WerNormalization normalization);
// The JSON members of a speech score, without braces: every score at full precision, then wer_substitutions,
// wer_deletions, wer_insertions, wer_hits, wer_reference_words, wer_hypothesis_words, wer_normalization.
std::string speech_scores_json_members(const eval::SpeechScoreResult& result,
                                       eval::WerNormalization normalization);

}  // namespace gpstream::cli
