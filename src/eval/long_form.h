// Long-form (unsegmented stream) evaluation: the hypothesis of a whole stream is one word sequence, cut into
// one segment per reference sentence the way mwerSegmenter does (Matusov et al. 2005), then scored with
// sacreBLEU's BLEU and chrF and with StreamLAAL (Papi et al. 2024, StreamAtt; FBK simulstream), whose
// per-sentence term is latency_laal over delays relative to the sentence's start in the stream.
// The definitions, limits and the JSON run format are in docs/evaluation.md ("Long-form evaluation").
// It does not build the documents (eval --long-form); it scores a run given as words with their delays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "util/error.h"

namespace gpstream::eval {

// The resegmentation DP has (N + 1)·(R + 1) cells (N hypothesis words, R reference words) with a 2-bit
// backpointer each: at most 2^28 cells (64 MiB of backpointers, about a second), refused beyond.
inline constexpr uint64_t kMaxResegmentCells = uint64_t{1} << 28;
// Bounds of a run file (score --long-form): its size, sentences, and words (hypothesis; references in all).
inline constexpr size_t kMaxLongFormFileBytes = size_t{64} << 20;
inline constexpr size_t kMaxLongFormSentences = size_t{1} << 20;
inline constexpr size_t kMaxLongFormWords = size_t{1} << 22;

// Whitespace tokens (split on ASCII space, \t, \n, \v, \f, \r; case and punctuation kept).
std::vector<std::string> long_form_words(std::string_view text);

// mwerSegmenter's criterion: the cut positions 0 = c_0 ≤ c_1 ≤ … ≤ c_K = N that minimise
// Σ_k Levenshtein(hyp[c_{k−1}, c_k), reference k) over words; among equal totals, the earliest cuts (every
// c_k as small as it can be; that vector is itself optimal). Returns K + 1 cuts. Computed as one minimum-cost
// alignment of the hypothesis against the concatenated references: c_k is where the alignment first reaches
// the end of reference k. Every reference needs at least one word; K ≥ 1.
Result<std::vector<size_t>> resegment_cuts(std::span<const std::string> hyp_words,
                                           const std::vector<std::vector<std::string>>& reference_words);
// The segments themselves: segment k is the hypothesis words of reference sentence k, joined by one space
// ("" when none).
Result<std::vector<std::string>> resegment(std::span<const std::string> hyp_words,
                                           const std::vector<std::string>& reference_sentences);

struct StreamLaal {
  std::optional<double> mean;                       // over the sentences with a hypothesis word; none if none
  std::vector<std::optional<double>> per_sentence;  // LAAL_i, nothing for an empty segment
  size_t empty_sentences = 0;
};

// StreamLAAL: sentence i spans [s_i, s_i + |X_i|) of the source (s_i = Σ_{k<i} |X_k|); its words j (cuts[i]
// ≤ j < cuts[i + 1]) get relative delays d'_j = delays[j] − s_i, and LAAL_i = latency_laal(d', |X_i|, |Y*_i|)
// = (1/τ_i) Σ_{j≤τ_i} (d'_j − (j − 1)·|X_i| / max(|Y_i|, |Y*_i|)), τ_i the first j with d'_j ≥ |X_i| (else
// |Y_i|). Units are the caller's, the same for delays and source lengths: source words read (StreamLAAL) or
// elapsed ms with the sentences' spans in ms (StreamLAAL_CA). cuts: from resegment_cuts (K + 1 entries).
Result<StreamLaal> stream_laal(std::span<const double> delays, std::span<const size_t> cuts,
                               std::span<const double> source_lengths,
                               std::span<const int64_t> reference_lengths);

enum class LongFormUnit { Word, Ms };

// One scored run: the reference sentences with their source lengths, and the hypothesis word stream.
struct LongFormRun {
  LongFormUnit unit = LongFormUnit::Word;  // what source_lengths and delays count
  std::vector<double> source_lengths;      // |X_i| per sentence, > 0
  std::vector<double> source_ms;           // word unit only, optional: |X_i| in ms, for StreamLAAL_CA
  std::vector<std::string> references;
  std::vector<std::string> words;
  std::vector<double> delays;                  // source units read when each word was written
  std::optional<std::vector<double>> elapsed;  // ms since the stream started, for StreamLAAL_CA
};

// Reads a run file's text (docs/evaluation.md, "Long-form evaluation"): strict, every size bounded, every
// error naming `file` and the key.
Result<LongFormRun> parse_long_form_run(std::string_view text, const std::string& file);

struct LongFormScores {
  BleuResult bleu;
  ChrfResult chrf;
  StreamLaal laal;
  std::optional<StreamLaal> laal_ca;  // when the run has elapsed times (and spans in ms)
  std::vector<size_t> cuts;
  std::vector<std::string> segments;
};

// Resegments, then BLEU and chrF of the segments against the references and StreamLAAL (+ _CA).
Result<LongFormScores> score_long_form(const LongFormRun& run, const BleuOptions& bleu_options = {},
                                       const ChrfOptions& chrf_options = {});
// Several runs (the talks of one evaluation) scored as one corpus: each run is resegmented onto its own
// references, then corpus BLEU and chrF over all segments and StreamLAAL (+ _CA) over all sentences (the
// mean of every non-empty sentence's LAAL_i). `cuts` index the runs' words concatenated in order: run r's
// segments follow run r − 1's, so cuts has Σ K_r + 1 entries. _CA only when every run has elapsed times.
Result<LongFormScores> score_long_form(std::span<const LongFormRun> runs,
                                       const BleuOptions& bleu_options = {},
                                       const ChrfOptions& chrf_options = {});

// The run file of `run` (the format parse_long_form_run reads): word-unit lengths and delays as integers,
// everything else as the shortest decimal that reads back to the same double.
std::string format_long_form_run(const LongFormRun& run);

}  // namespace gpstream::eval
