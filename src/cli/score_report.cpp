// Score reporting shared by `gpstream score` and `gpstream eval --speech`.
#include "cli/score_report.h"

#include <cstdio>

#include "eval/python_format.h"

namespace gpstream::cli {

void report_skipped(const std::string& command, const std::vector<int64_t>& skipped, size_t total) {
  if (skipped.empty()) return;
  std::string ids;
  for (size_t i = 0; i < skipped.size() && i < 20; ++i) ids += (i ? ", " : "") + std::to_string(skipped[i]);
  if (skipped.size() > 20) ids += ", ...";
  std::fprintf(stderr,
               "gpstream %s: %zu of %zu instances have no delays and are left out of the latency averages "
               "(as SimulEval does): %s\n",
               command.c_str(), skipped.size(), total, ids.c_str());
}

std::string skipped_json(const std::vector<int64_t>& skipped) {
  std::string s = "[";
  for (size_t i = 0; i < skipped.size(); ++i) s += (i ? ", " : "") + std::to_string(skipped[i]);
  return s + "]";
}

std::string speech_wer_line(const eval::WerCounts& c, eval::WerNormalization normalization) {
  return "WER: " + std::to_string(c.substitutions) + " substitutions, " + std::to_string(c.deletions) +
         " deletions, " + std::to_string(c.insertions) + " insertions over " +
         std::to_string(c.reference_words) +
         " reference words (normalisation: " + eval::wer_normalization_name(normalization) + ")";
}

std::string speech_scores_json_members(const eval::SpeechScoreResult& result,
                                       eval::WerNormalization normalization) {
  std::string s;
  for (const auto& [name, v] : result.scores) s += "\"" + name + "\": " + eval::python_repr(v) + ", ";
  const auto& c = result.wer;
  s += "\"wer_substitutions\": " + std::to_string(c.substitutions) +
       ", \"wer_deletions\": " + std::to_string(c.deletions) +
       ", \"wer_insertions\": " + std::to_string(c.insertions) + ", \"wer_hits\": " + std::to_string(c.hits) +
       ", \"wer_reference_words\": " + std::to_string(c.reference_words) +
       ", \"wer_hypothesis_words\": " + std::to_string(c.hypothesis_words) + ", \"wer_normalization\": \"" +
       eval::wer_normalization_name(normalization) + "\"";
  return s;
}

}  // namespace gpstream::cli
