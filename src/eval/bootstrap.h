// Paired bootstrap resampling for BLEU with sacreBLEU's --paired-bs semantics
// (sacrebleu/significance.py): S resamples (default 1000) of the N segments with replacement,
// the same resampled indices for both systems, corpus BLEU of each resample from the segment
// statistics (compute_bleu), sacreBLEU's mean ± 95% CI (estimate_ci: sorted scores, bounds at
// n//40 from each end, CI = half their distance) and its p-value ((#{|Δ*| − mean|Δ*| > |Δ|} + 1) / (S + 1)).
// Also the 95% interval of the difference system − baseline (same order statistics).
// The resampling RNG is gpstream's (splitmix64 + Lemire bounded draws, seed 12345 by default), not
// numpy's PCG64, so individual numbers differ slightly from sacreBLEU's while meaning the same.
#pragma once

#include <cstdint>
#include <vector>

#include "eval/bleu.h"
#include "util/error.h"

namespace gpstream::eval {

struct BootstrapEstimate {
  double score = 0.0;  // on the full corpus
  double mean = 0.0;   // mean over resamples
  double ci = 0.0;     // half-width of the 95% interval (sacreBLEU's "± ci")
};

struct PairedBootstrapResult {
  BootstrapEstimate baseline;
  BootstrapEstimate system;
  double diff = 0.0;        // system − baseline on the full corpus
  double diff_lower = 0.0;  // 95% interval of system − baseline over resamples
  double diff_upper = 0.0;
  double p_value = 1.0;  // sacreBLEU's paired-bs p-value
  int n_samples = 0;
  uint64_t seed = 0;
};

// baseline[i] and system[i] are the statistics of segment i (same references).
Result<PairedBootstrapResult> paired_bootstrap_bleu(const std::vector<BleuStats>& baseline,
                                                    const std::vector<BleuStats>& system,
                                                    const BleuOptions& options, int n_samples = 1000,
                                                    uint64_t seed = 12345);

}  // namespace gpstream::eval
