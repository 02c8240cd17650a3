// Paired bootstrap resampling for BLEU with sacreBLEU's --paired-bs semantics
// (sacrebleu/significance.py): S resamples (default 1000) of the N segments with replacement,
// the same resampled indices for both systems, corpus BLEU of each resample from the segment
// statistics (compute_bleu), sacreBLEU's mean ± 95% CI (estimate_ci: sorted scores, bounds at
// n//40 from each end, CI = half their distance) and its p-value ((#{|Δ*| − mean|Δ*| > |Δ|} + 1) / (S + 1)).
// Also the 95% interval of the difference system − baseline (same order statistics).
// Also a two-level bootstrap over training seeds (seed_bootstrap_bleu), for systems trained several times.
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

// Two-level bootstrap of the difference of seed-mean BLEU between two systems, each trained with several
// seeds: in each of S resamples, N segment indices are drawn with replacement (shared by every run of both
// systems), then each system's seeds are drawn with replacement (as many as it has), and the resample's
// value is the mean corpus BLEU of the system's drawn seeds minus the baseline's. The interval has the same
// order statistics as paired_bootstrap_bleu's. Draw order per resample: the N indices, then the baseline's
// seeds, then the system's (SplitMix64::below). With paired_seeds (both systems evaluate the same trained
// models, run r of one against run r of the other: equal counts) one draw of seeds serves both, so the
// training noise they share cancels. runs[r][i]: the statistics of segment i in run (seed) r.
struct SeedBootstrapResult {
  std::vector<double> baseline_scores;  // corpus BLEU of each baseline run
  std::vector<double> system_scores;
  double baseline_mean = 0.0;  // mean over runs
  double system_mean = 0.0;
  double diff = 0.0;  // system_mean − baseline_mean
  double diff_lower = 0.0;
  double diff_upper = 0.0;
  int n_samples = 0;
  uint64_t seed = 0;
};

Result<SeedBootstrapResult> seed_bootstrap_bleu(const std::vector<std::vector<BleuStats>>& baseline_runs,
                                                const std::vector<std::vector<BleuStats>>& system_runs,
                                                const BleuOptions& options, int n_samples = 1000,
                                                uint64_t seed = 12345, bool paired_seeds = false);

// The sample standard deviation (n − 1) of xs; 0 for fewer than two values.
double sample_sd(const std::vector<double>& xs);

}  // namespace gpstream::eval
