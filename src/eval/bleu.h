// BLEU exactly as sacreBLEU 2.6.0 computes it (sacrebleu/metrics/bleu.py; metrics.md B.2): each
// segment reduces to sufficient statistics (BleuStats), the corpus is their sum, and
// compute_bleu() is a pure function of the sums, so bootstrap resampling reuses the statistics.
// Covers tokenizers 13a/intl/char/none, smoothing exp/floor/add-k/none, effective order, several
// (and a variable number of) references, lowercasing, any max n-gram order, and the signature
// line byte for byte. Not here: TER, and the zh/ja/ko/spm tokenizers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/tokenizers.h"
#include "util/error.h"

namespace gpstream::eval {

// The sacreBLEU release whose numbers and signatures gpstream reproduces.
inline constexpr std::string_view kSacrebleuVersion = "2.6.0";

enum class SmoothMethod { None, Floor, AddK, Exp };
std::string_view smooth_method_name(SmoothMethod m);  // "none", "floor", "add-k", "exp"
Result<SmoothMethod> parse_smooth_method(std::string_view name);

struct BleuOptions {
  bool lowercase = false;
  BleuTokenizer tokenize = BleuTokenizer::Tok13a;
  SmoothMethod smooth_method = SmoothMethod::Exp;
  std::optional<double> smooth_value;  // unset: floor 0.1, add-k 1 (BLEU.SMOOTH_DEFAULTS)
  int max_ngram_order = 4;
  bool effective_order = false;
};

// Segment (or summed corpus) statistics: sacreBLEU's [hyp_len, ref_len, correct_1..N, total_1..N].
struct BleuStats {
  int64_t hyp_len = 0;
  int64_t ref_len = 0;
  std::vector<int64_t> correct;  // N entries
  std::vector<int64_t> total;    // N entries
  BleuStats& operator+=(const BleuStats& o);
};

struct BleuScore {
  double score = 0.0;              // 0..100
  std::vector<double> counts;      // correct n-grams (after add-k smoothing, as sacreBLEU reports)
  std::vector<double> totals;      // total n-grams (idem)
  std::vector<double> precisions;  // percentages
  double bp = 0.0;
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  double ratio() const { return ref_len ? static_cast<double>(sys_len) / static_cast<double>(ref_len) : 0.0; }
};

// `BLEU.compute_bleu` (pure): BP, the smoothed precisions and the geometric mean (metrics.md B.2.5).
BleuScore compute_bleu(std::vector<double> correct, std::vector<double> total, int64_t sys_len,
                       int64_t ref_len, SmoothMethod smooth_method = SmoothMethod::None,
                       std::optional<double> smooth_value = std::nullopt, bool effective_order = false,
                       int max_ngram_order = 4);
BleuScore compute_bleu(const BleuStats& stats, const BleuOptions& options);

// Lowercasing (optional) and tokenization of one segment, after Python rstrip() (`_preprocess_segment`).
std::string bleu_preprocess(std::string_view sentence, const BleuOptions& options);

// Statistics of one hypothesis against its references. Empty references are dropped (sacreBLEU's
// variable-reference convention); at least one must remain, else an error.
Result<BleuStats> bleu_segment_stats(std::string_view hypothesis,
                                     const std::vector<std::string_view>& references,
                                     const BleuOptions& options);

// Per-segment statistics of a corpus. ref_streams[k][i] is reference k of segment i ("" = absent
// for that segment). Every stream must have hyps.size() lines. num_refs receives the number of
// references per segment, or -1 when it varies (signature "nrefs:var").
Result<std::vector<BleuStats>> bleu_corpus_stats(const std::vector<std::string>& hyps,
                                                 const std::vector<std::vector<std::string>>& ref_streams,
                                                 const BleuOptions& options, int* num_refs = nullptr);

BleuStats sum_stats(const std::vector<BleuStats>& stats, int max_ngram_order);

struct BleuResult {
  BleuScore score;
  int num_refs = 1;  // -1: variable
};

// `BLEU(...).corpus_score(hyps, ref_streams)`.
Result<BleuResult> corpus_bleu(const std::vector<std::string>& hyps,
                               const std::vector<std::vector<std::string>>& ref_streams,
                               const BleuOptions& options);
// `BLEU(...).sentence_score(hyp, refs)`. sacreBLEU's sentence-level entry points
// (compat.sentence_bleu, the CLI's --sentence-level) also turn on effective_order: use
// sentence_bleu_options() for that.
Result<BleuScore> sentence_bleu(std::string_view hypothesis, const std::vector<std::string_view>& references,
                                const BleuOptions& options);
BleuOptions sentence_bleu_options(BleuOptions options);

// Optional signature fields of bootstrap/paired tests ("bs:1000|rs:12345").
struct SignatureExtras {
  std::optional<int> n_bootstrap;
  std::optional<int64_t> seed;
};

// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" (short:
// "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0").
std::string bleu_signature(const BleuOptions& options, int num_refs, bool short_form = false,
                           const SignatureExtras& extras = {});
// sacreBLEU's score line: "BLEU|<sig> = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17
// ref_len = 18)"; width = digits of the score (the CLI's -w, default 1; str(score) uses 2).
std::string format_bleu_line(const BleuScore& score, std::string_view signature, int width);
// The part after the score: "82.4/50.0/45.5/37.5 (BP = ... ref_len = 18)".
std::string bleu_verbose(const BleuScore& score);

}  // namespace gpstream::eval
