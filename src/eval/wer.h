// Word error rate: word-level Levenshtein alignment of a hypothesis against a reference, summed
// over a corpus the way jiwer and sclite report corpus WER — Σ edits / Σ reference words, not the
// mean of sentence WERs. Each pair is aligned with unit costs (substitution, deletion, insertion
// 1, match 0); among the alignments with the fewest edits the one with the most substitutions is
// counted (equivalently the fewest deletions), so S, D and I do not depend on a backtrace order.
// The text is first normalised (wer_normalize; docs/speech.md "Evaluation").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gpstream::eval {

enum class WerNormalization {
  // NFKC, Python str.lower(), punctuation/symbols → spaces except apostrophes inside words,
  // whitespace split.
  Basic,
  // Python str.split() only: SimulEval's WER scorer without --wer-whisper-en-norm.
  None,
};

// "basic" / "none" (errors name the accepted values).
Result<WerNormalization> parse_wer_normalization(std::string_view name);
const char* wer_normalization_name(WerNormalization n);

// The words WER compares, after normalisation.
std::vector<std::string> wer_words(std::string_view text, WerNormalization normalization);
// The basic normalisation as one string (words joined by single spaces).
std::string wer_normalize(std::string_view text);

struct WerCounts {
  int64_t hits = 0;
  int64_t substitutions = 0;
  int64_t deletions = 0;   // reference words missing from the hypothesis
  int64_t insertions = 0;  // hypothesis words not in the reference
  int64_t reference_words = 0;
  int64_t hypothesis_words = 0;

  int64_t edits() const { return substitutions + deletions + insertions; }
  WerCounts& operator+=(const WerCounts& o);
  bool operator==(const WerCounts& o) const = default;
};

// Alignments larger than this many DP cells (|ref| × |hyp|) are refused rather than run: a
// hostile line of a million words would otherwise take hours. 2^30 cells is about a second and
// covers a 30 000-word long-form transcript against itself.
constexpr int64_t kMaxWerAlignmentCells = int64_t{1} << 30;

// Aligns already-normalised word sequences (O(|hyp|) memory).
Result<WerCounts> align_words(const std::vector<std::string>& reference,
                              const std::vector<std::string>& hypothesis);
// Normalises both sides and aligns them.
Result<WerCounts> wer_counts(std::string_view reference, std::string_view hypothesis,
                             WerNormalization normalization = WerNormalization::Basic);

struct WerResult {
  WerCounts counts;  // corpus sums
  double wer = 0;    // counts.edits() / counts.reference_words (a fraction; ×100 for percent)
};

// Corpus WER over aligned lists (same length; errors name the pair). When no reference has a
// word the rate is 0 if no hypothesis has one either, and an error otherwise (WER is undefined).
Result<WerResult> corpus_wer(const std::vector<std::string>& references,
                             const std::vector<std::string>& hypotheses,
                             WerNormalization normalization = WerNormalization::Basic);

}  // namespace gpstream::eval
