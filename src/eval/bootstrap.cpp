#include "eval/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

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

// The 95% interval of sorted-or-not differences d, with estimate's order statistics.
std::pair<double, double> interval95(std::vector<double> d) {
  std::sort(d.begin(), d.end());
  const size_t lower = d.size() / 40;
  return {d[lower], d[d.size() - lower - 1]};
}

BleuStats zero_stats(int order) {
  BleuStats z;
  z.correct.assign(static_cast<size_t>(order), 0);
  z.total.assign(static_cast<size_t>(order), 0);
  return z;
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
    a = zero_stats(order);
    b = zero_stats(order);
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
  std::tie(r.diff_lower, r.diff_upper) = interval95(std::move(d));
  return r;
}

double sample_sd(const std::vector<double>& xs) {
  if (xs.size() < 2) return 0.0;
  double mean = 0.0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  double ss = 0.0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

Result<SeedBootstrapResult> seed_bootstrap_bleu(const std::vector<std::vector<BleuStats>>& baseline_runs,
                                                const std::vector<std::vector<BleuStats>>& system_runs,
                                                const BleuOptions& options, int n_samples, uint64_t seed,
                                                bool paired_seeds) {
  if (baseline_runs.empty() || system_runs.empty())
    return invalid_argument("seed bootstrap: each system needs at least one run");
  if (paired_seeds && baseline_runs.size() != system_runs.size())
    return invalid_argument("seed bootstrap: paired seeds need as many runs of the system (" +
                            std::to_string(system_runs.size()) + ") as of the baseline (" +
                            std::to_string(baseline_runs.size()) + ")");
  if (n_samples < 1) return invalid_argument("seed bootstrap: n_samples must be >= 1");
  const size_t n = baseline_runs[0].size();
  if (n == 0) return invalid_argument("seed bootstrap: no segments");
  for (const auto* runs : {&baseline_runs, &system_runs}) {
    for (const auto& run : *runs) {
      if (run.size() != n) {
        return invalid_argument("seed bootstrap: a run has " + std::to_string(run.size()) +
                                " segments, the first " + std::to_string(n));
      }
    }
  }
  const int order = options.max_ngram_order;
  SeedBootstrapResult r;
  r.n_samples = n_samples;
  r.seed = seed;
  auto mean_of = [](const std::vector<double>& xs) {
    double s = 0.0;
    for (double x : xs) s += x;
    return s / static_cast<double>(xs.size());
  };
  for (const auto& run : baseline_runs)
    r.baseline_scores.push_back(compute_bleu(sum_stats(run, order), options).score);
  for (const auto& run : system_runs)
    r.system_scores.push_back(compute_bleu(sum_stats(run, order), options).score);
  r.baseline_mean = mean_of(r.baseline_scores);
  r.system_mean = mean_of(r.system_scores);
  r.diff = r.system_mean - r.baseline_mean;

  SplitMix64 rng(seed);
  std::vector<size_t> indices(n);
  // The resampled corpus BLEU of each run.
  auto resampled_scores = [&](const std::vector<std::vector<BleuStats>>& runs) {
    std::vector<double> score(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
      BleuStats total = zero_stats(order);
      for (size_t i : indices) total += runs[k][i];
      score[k] = compute_bleu(total, options).score;
    }
    return score;
  };
  auto draw_runs = [&](std::vector<size_t>& drawn) {
    for (auto& k : drawn) k = static_cast<size_t>(rng.below(drawn.size()));
  };
  auto mean_over = [](const std::vector<double>& score, const std::vector<size_t>& drawn) {
    double s = 0.0;
    for (size_t k : drawn) s += score[k];
    return s / static_cast<double>(drawn.size());
  };
  std::vector<size_t> base_drawn(baseline_runs.size()), sys_drawn(system_runs.size());
  std::vector<double> d(static_cast<size_t>(n_samples));
  for (auto& x : d) {
    for (auto& i : indices) i = static_cast<size_t>(rng.below(n));
    draw_runs(base_drawn);
    if (paired_seeds)
      sys_drawn = base_drawn;
    else
      draw_runs(sys_drawn);
    x = mean_over(resampled_scores(system_runs), sys_drawn) -
        mean_over(resampled_scores(baseline_runs), base_drawn);
  }
  std::tie(r.diff_lower, r.diff_upper) = interval95(std::move(d));
  return r;
}

}  // namespace gpstream::eval
