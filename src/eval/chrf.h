// chrF and chrF++ exactly as sacreBLEU 2.6.0 (sacrebleu/metrics/chrf.py; metrics.md B.3):
// character n-grams (orders 1..char_order, whitespace removed unless `whitespace`), optional word
// n-grams (chrF++: word_order 2, punctuation split off word edges), F-beta over the averaged
// precision/recall of the orders present ("effective order", default) or chrF++.py's epsilon
// smoothing. Multi-reference: per segment the reference with the strictly best F wins.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;
  bool eps_smoothing = false;
};

// Per segment: 3 numbers per order (char orders first, then word orders): [hyp n-grams (0 when
// the reference has none of that order), ref n-grams, matches].
using ChrfStats = std::vector<int64_t>;

// `CHRF._compute_f_score`: the score (0..100) of (summed) statistics.
double chrf_f_score(const ChrfStats& stats, const ChrfOptions& options);

// Statistics of one segment against its non-empty references (at least one).
Result<ChrfStats> chrf_segment_stats(std::string_view hypothesis,
                                     const std::vector<std::string_view>& references,
                                     const ChrfOptions& options);

struct ChrfResult {
  double score = 0.0;
  int num_refs = 1;  // -1: variable
};

// ref_streams[k][i] = reference k of segment i ("" = absent).
Result<std::vector<ChrfStats>> chrf_corpus_stats(const std::vector<std::string>& hyps,
                                                 const std::vector<std::vector<std::string>>& ref_streams,
                                                 const ChrfOptions& options, int* num_refs = nullptr);
Result<ChrfResult> corpus_chrf(const std::vector<std::string>& hyps,
                               const std::vector<std::vector<std::string>>& ref_streams,
                               const ChrfOptions& options);
Result<double> sentence_chrf(std::string_view hypothesis, const std::vector<std::string_view>& references,
                             const ChrfOptions& options);

// "chrF2", "chrF2++" (one '+' per word order).
std::string chrf_name(const ChrfOptions& options);
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0" / "#:1|c:mixed|e:yes|nc:6|nw:0|s:no|v:2.6.0".
std::string chrf_signature(const ChrfOptions& options, int num_refs, bool short_form = false);
// "chrF2|<sig> = 59.7".
std::string format_chrf_line(double score, const ChrfOptions& options, std::string_view signature, int width);

}  // namespace gpstream::eval
