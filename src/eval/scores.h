// Scoring a list of SimulEval instances like `simuleval --score-only`: corpus BLEU (sacreBLEU,
// SimulEval's quality scorer) followed by the latency metrics, and the two ways SimulEval shows
// them: scores.tsv (pandas to_csv, tab-separated, values round(x, 3)) and the printed table
// (pandas DataFrame.to_string(index=False)).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "eval/bleu.h"
#include "eval/instance_log.h"
#include "eval/latency.h"
#include "eval/python_format.h"

namespace gpstream::eval {

using NamedScores = std::vector<std::pair<std::string, PyNumber>>;

struct ScoreOptions {
  bool quality = true;                             // BLEU first, as SimulEval's default quality list
  BleuTokenizer tokenize = BleuTokenizer::Tok13a;  // --sacrebleu-tokenizer
  LatencyOptions latency;
};

struct ScoreResult {
  NamedScores scores;            // unrounded
  std::vector<int64_t> skipped;  // instances without delays (left out of the latency means)
  std::vector<std::string> warnings;
};

// BLEU over (prediction, reference) in record order. As SimulEval's SacreBLEUScorer, an instance
// without a reference (null or "") makes sacreBLEU raise, and the score is then the int 0 (with a
// warning naming the instance).
PyNumber simuleval_bleu(const std::vector<InstanceRecord>& instances, BleuTokenizer tokenize,
                        std::vector<std::string>* warnings);

Result<ScoreResult> score_instances(const std::vector<InstanceRecord>& instances,
                                    const ScoreOptions& options);

// scores.tsv: header line and one row, each value round(x, 3) written as Python repr.
std::string format_scores_tsv(const NamedScores& scores);
// Writes format_scores_tsv(scores) to path atomically (temp file + rename).
Status write_scores_tsv(const std::string& path, const NamedScores& scores);
// The table SimulEval prints (values round(x, 3)), without a trailing newline.
std::string format_scores_table(const NamedScores& scores);

}  // namespace gpstream::eval
