#include "eval/scores.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace gpstream::eval {

PyNumber simuleval_bleu(const std::vector<InstanceRecord>& instances, BleuTokenizer tokenize,
                        std::vector<std::string>* warnings) {
  if (instances.empty()) {
    if (warnings) warnings->push_back("BLEU: no instances; score 0 (as SimulEval)");
    return {0.0, true};
  }
  std::vector<std::string> hyps;
  std::vector<std::vector<std::string>> refs(1);
  for (const auto& ins : instances) {
    if (!ins.reference || ins.reference->empty()) {
      if (warnings) {
        warnings->push_back(
            "BLEU: instance " + std::to_string(ins.index) +
            " has no reference; sacreBLEU raises \"Empty or `None` reference sentence found.\" and "
            "SimulEval reports BLEU 0");
      }
      return {0.0, true};
    }
    hyps.push_back(ins.prediction);
    refs[0].push_back(*ins.reference);
  }
  BleuOptions o;
  o.tokenize = tokenize;
  auto r = corpus_bleu(hyps, refs, o);
  if (!r.ok()) {
    if (warnings) warnings->push_back("BLEU: " + r.error().message() + "; SimulEval reports 0");
    return {0.0, true};
  }
  return {r->score.score, false};
}

Result<ScoreResult> score_instances(const std::vector<InstanceRecord>& instances,
                                    const ScoreOptions& options) {
  ScoreResult out;
  if (options.quality)
    out.scores.emplace_back("BLEU", simuleval_bleu(instances, options.tokenize, &out.warnings));
  if (!options.latency.metrics.empty()) {
    GPS_ASSIGN(auto lat, compute_latency(instances, options.latency));
    for (auto& s : lat.scores) out.scores.push_back(std::move(s));
    out.skipped = std::move(lat.skipped);
    for (auto& w : lat.warnings) out.warnings.push_back(std::move(w));
  }
  return out;
}

std::string format_scores_tsv(const NamedScores& scores) {
  std::string header, row;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (i) {
      header += '\t';
      row += '\t';
    }
    header += scores[i].first;
    row += python_repr(python_round(scores[i].second, 3));
  }
  return header + "\n" + row + "\n";
}

Status write_scores_tsv(const std::string& path, const NamedScores& scores) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error("cannot write " + tmp);
    out << format_scores_tsv(scores);
    out.flush();
    if (!out) return io_error("error writing " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return io_error("cannot rename " + tmp + " to " + path);
  return {};
}

std::string format_scores_table(const NamedScores& scores) {
  // pandas: numeric column labels get a leading space; each column is right-justified to
  // max(label, cell) and columns are joined by one space (index=False: no sign padding on cells).
  std::string header, row;
  for (size_t i = 0; i < scores.size(); ++i) {
    std::string label(1, ' ');
    label += scores[i].first;
    const std::string cell = pandas_cell(python_round(scores[i].second, 3));
    const size_t w = std::max(label.size(), cell.size());
    if (i) {
      header += ' ';
      row += ' ';
    }
    header += std::string(w - label.size(), ' ') + label;
    row += std::string(w - cell.size(), ' ') + cell;
  }
  return header + "\n" + row;
}

}  // namespace gpstream::eval
