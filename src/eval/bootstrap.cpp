#include "eval/bootstrap.h"

#include <algorithm>
#include <cmath>

#include "util/splitmix64.h"

namespace gpstream::eval {

namespace {

// sacreBLEU's estimate_ci over sorted scores.
void estimate(std::vector<double> scores, double* mean, double* ci) {
  std::sort(scores.begin(), scores.end());
  const size_t n = scores.size();
  const size_t lower = n / 40;
  const size_t upper = n - lower - 1;
  *ci = 0.5 * (scores[upper] - scores[lower]);
  double s = 0.0;
  for (double x : scores) s += x;
  *mean = s / static_cast<double>(n);
}

}  // namespace

Result<PairedBootstrapResult> paired_bootstrap_bleu(const std::vector<BleuStats>& baseline,
                                                    const std::vector<BleuStats>& system,
                                                    const BleuOptions& options, int n_samples,
                                                    uint64_t seed) {
  if (baseline.size() != system.size()) {
    return invalid_argument("paired bootstrap: baseline has " + std::to_string(baseline.size()) +
                            " segments, system " + std::to_string(system.size()));
  }
  if (baseline.empty()) return invalid_argument("paired bootstrap: no segments");
  if (n_samples < 1) return invalid_argument("paired bootstrap: n_samples must be >= 1");
  const size_t n = baseline.size();
  const int order = options.max_ngram_order;

  PairedBootstrapResult r;
  r.n_samples = n_samples;
  r.seed = seed;
  r.baseline.score = compute_bleu(sum_stats(baseline, order), options).score;
  r.system.score = compute_bleu(sum_stats(system, order), options).score;
  r.diff = r.system.score - r.baseline.score;

  SplitMix64 rng(seed);
  std::vector<double> bl(static_cast<size_t>(n_samples)), sy(static_cast<size_t>(n_samples));
  BleuStats a, b;
  for (int s = 0; s < n_samples; ++s) {
    a = BleuStats{};
    b = BleuStats{};
    a.correct.assign(static_cast<size_t>(order), 0);
    a.total.assign(static_cast<size_t>(order), 0);
    b.correct = a.correct;
    b.total = a.total;
    for (size_t k = 0; k < n; ++k) {
      const auto i = static_cast<size_t>(rng.below(n));
      a += baseline[i];
      b += system[i];
    }
    bl[static_cast<size_t>(s)] = compute_bleu(a, options).score;
    sy[static_cast<size_t>(s)] = compute_bleu(b, options).score;
  }
  estimate(bl, &r.baseline.mean, &r.baseline.ci);
  estimate(sy, &r.system.mean, &r.system.ci);

  std::vector<double> d(static_cast<size_t>(n_samples)), absd(static_cast<size_t>(n_samples));
  double mean_abs = 0.0;
  for (size_t s = 0; s < d.size(); ++s) {
    d[s] = sy[s] - bl[s];
    absd[s] = std::fabs(d[s]);
    mean_abs += absd[s];
  }
  mean_abs /= static_cast<double>(d.size());
  const double real = std::fabs(r.diff);
  size_t c = 0;
  for (double x : absd) c += (x - mean_abs) > real;
  r.p_value = static_cast<double>(c + 1) / static_cast<double>(d.size() + 1);
  std::sort(d.begin(), d.end());
  const size_t lower = d.size() / 40;
  r.diff_lower = d[lower];
  r.diff_upper = d[d.size() - lower - 1];
  return r;
}

}  // namespace gpstream::eval
