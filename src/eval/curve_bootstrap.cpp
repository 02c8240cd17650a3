#include "eval/curve_bootstrap.h"

#include <algorithm>
#include <cmath>

#include "util/splitmix64.h"

namespace gpstream::eval {

namespace {

BleuStats zero_stats(int order) {
  BleuStats s;
  s.correct.assign(static_cast<size_t>(order), 0);
  s.total.assign(static_cast<size_t>(order), 0);
  return s;
}

// Corpus BLEU, or WER in percent, of one setting's sentences `indices` (with repetitions). WER over
// sentences without a reference word is 0 when they have no hypothesis word either, else 100 per word.
double resampled_quality(const CurveSetting& setting, const std::vector<size_t>& indices,
                         const CurveCompareOptions& options) {
  if (options.quality == CurveQuality::Wer) {
    WerCounts sum;
    for (size_t i : indices) sum += setting.wer[i];
    if (sum.reference_words == 0) return 100.0 * static_cast<double>(sum.edits());
    return 100.0 * static_cast<double>(sum.edits()) / static_cast<double>(sum.reference_words);
  }
  BleuStats sum = zero_stats(options.bleu.max_ngram_order);
  for (size_t i : indices) sum += setting.bleu[i];
  return compute_bleu(sum, options.bleu).score;
}

// Quality and mean latency of one setting over the sentences `indices` (with repetitions).
std::optional<CurvePoint> resampled_point(const CurveSetting& setting, const std::vector<size_t>& indices,
                                          const CurveCompareOptions& options,
                                          std::vector<PyNumber>* scratch) {
  scratch->clear();
  for (size_t i : indices)
    if (setting.latency[i]) scratch->push_back(*setting.latency[i]);
  if (scratch->empty()) return std::nullopt;
  return CurvePoint{python_mean(*scratch).value, resampled_quality(setting, indices, options)};
}

size_t quality_size(const CurveSetting& s, CurveQuality q) {
  return q == CurveQuality::Wer ? s.wer.size() : s.bleu.size();
}

std::optional<double> curve_at(const std::vector<CurveSetting>& curve, const std::vector<size_t>& indices,
                               const CurveCompareOptions& options, double x, std::vector<CurvePoint>* points,
                               std::vector<PyNumber>* scratch, bool recompute) {
  if (recompute) {
    points->clear();
    for (const auto& s : curve)
      if (auto p = resampled_point(s, indices, options, scratch)) points->push_back(*p);
  }
  return interpolate_curve(*points, x);
}

}  // namespace

std::optional<double> interpolate_curve(std::vector<CurvePoint> points, double x) {
  if (points.empty() || !std::isfinite(x)) return std::nullopt;
  std::stable_sort(points.begin(), points.end(),
                   [](const CurvePoint& a, const CurvePoint& b) { return a.latency < b.latency; });
  // Points at one latency become one, at the mean of their BLEU.
  std::vector<CurvePoint> merged;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    double sum = 0.0;
    while (j < points.size() && points[j].latency == points[i].latency) sum += points[j++].quality;
    merged.push_back({points[i].latency, sum / static_cast<double>(j - i)});
    i = j;
  }
  if (x < merged.front().latency || x > merged.back().latency) return std::nullopt;
  const auto hi = std::lower_bound(merged.begin(), merged.end(), x,
                                   [](const CurvePoint& p, double v) { return p.latency < v; });
  if (hi->latency == x) return hi->quality;
  const auto lo = hi - 1;  // x > merged.front().latency, so hi is not the first point
  const double t = (x - lo->latency) / (hi->latency - lo->latency);
  return lo->quality + t * (hi->quality - lo->quality);
}

SettingPoint setting_point(const CurveSetting& setting, const CurveCompareOptions& options) {
  std::vector<size_t> all(quality_size(setting, options.quality));
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<PyNumber> scratch;
  SettingPoint out;
  if (auto p = resampled_point(setting, all, options, &scratch)) {
    out.quality = p->quality;
    out.latency = p->latency;
  } else {
    out.quality = resampled_quality(setting, all, options);
  }
  return out;
}

Result<CurveComparison> compare_curves(const std::vector<CurveSetting>& baseline,
                                       const std::vector<CurveSetting>& system,
                                       const CurveCompareOptions& options) {
  if (baseline.empty() || system.empty())
    return invalid_argument("curve comparison: a curve has no settings");
  if (options.n_samples < 1) return invalid_argument("curve comparison: n_samples must be >= 1");
  for (double x : options.at)
    if (!std::isfinite(x)) return invalid_argument("curve comparison: a target latency is not finite");
  const size_t n = quality_size(baseline.front(), options.quality);
  if (n == 0) return invalid_argument("curve comparison: no sentences");
  for (const auto* curve : {&baseline, &system}) {
    for (const auto& s : *curve) {
      if (quality_size(s, options.quality) != n || s.latency.size() != n) {
        return invalid_argument("curve comparison: " + s.name + " has " +
                                std::to_string(quality_size(s, options.quality)) + " sentences, " +
                                baseline.front().name + " " + std::to_string(n) +
                                ": every setting must be evaluated on the same sentences");
      }
    }
  }

  CurveComparison r;
  r.n_sentences = n;
  r.n_samples = options.n_samples;
  r.seed = options.seed;
  using CurveAndPoints = std::pair<const std::vector<CurveSetting>*, std::vector<CurvePoint>*>;
  for (const auto& [curve, points] :
       {CurveAndPoints{&baseline, &r.baseline_points}, CurveAndPoints{&system, &r.system_points}}) {
    for (const auto& s : *curve) {
      const SettingPoint p = setting_point(s, options);
      if (!p.latency) return invalid_argument("curve comparison: " + s.name + ": no sentence has a latency");
      points->push_back({*p.latency, p.quality});
    }
  }
  for (double x : options.at) {
    CurveDifference d;
    d.at = x;
    d.baseline = interpolate_curve(r.baseline_points, x);
    d.system = interpolate_curve(r.system_points, x);
    if (d.baseline && d.system) d.diff = *d.system - *d.baseline;
    r.at.push_back(d);
  }

  const size_t n_at = options.at.size();
  std::vector<std::vector<double>> diffs(n_at);
  SplitMix64 rng(options.seed);
  std::vector<size_t> indices(n);
  std::vector<CurvePoint> base_points, sys_points;
  std::vector<PyNumber> scratch;
  for (int s = 0; s < options.n_samples; ++s) {
    for (size_t k = 0; k < n; ++k) indices[k] = static_cast<size_t>(rng.below(n));
    for (size_t a = 0; a < n_at; ++a) {
      const double x = options.at[a];
      const auto b = curve_at(baseline, indices, options, x, &base_points, &scratch, a == 0);
      const auto y = curve_at(system, indices, options, x, &sys_points, &scratch, a == 0);
      CurveDifference& d = r.at[a];
      d.n_baseline_out_of_range += !b;
      d.n_system_out_of_range += !y;
      if (b && y) {
        diffs[a].push_back(*y - *b);
      } else {
        ++d.n_out_of_range;
      }
    }
  }
  for (size_t a = 0; a < n_at; ++a) {
    CurveDifference& d = r.at[a];
    auto& v = diffs[a];
    d.n_valid = static_cast<int>(v.size());
    if (v.empty()) continue;
    double sum = 0.0;
    for (double x : v) sum += x;
    d.mean = sum / static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    const size_t lower = v.size() / 40;
    d.lower = v[lower];
    d.upper = v[v.size() - lower - 1];
    d.excludes_zero = d.diff && (*d.lower > 0.0 || *d.upper < 0.0);
  }
  return r;
}

Result<CurveSetting> curve_setting_from_instances(std::string name,
                                                  const std::vector<InstanceRecord>& instances,
                                                  const std::string& metric, CurveQuality quality,
                                                  const BleuOptions& bleu, const LatencyOptions& latency) {
  CurveSetting s;
  s.name = std::move(name);
  const char* metric_name = quality == CurveQuality::Wer ? "WER" : "BLEU";
  std::vector<std::string> hyps;
  std::vector<std::vector<std::string>> refs(1);
  for (const auto& ins : instances) {
    if (!ins.reference || ins.reference->empty()) {
      return invalid_argument(s.name + ": instance " + std::to_string(ins.index) + " has no reference (" +
                              metric_name + " is undefined)");
    }
    hyps.push_back(ins.prediction);
    refs[0].push_back(*ins.reference);
  }
  if (quality == CurveQuality::Wer) {
    for (size_t i = 0; i < hyps.size(); ++i) {
      auto c = wer_counts(refs[0][i], hyps[i]);
      if (!c.ok()) return c.error().with_context(s.name + ": instance " + std::to_string(instances[i].index));
      s.wer.push_back(*c);
    }
  } else {
    auto stats = bleu_corpus_stats(hyps, refs, bleu);
    if (!stats.ok()) return stats.error().with_context(s.name);
    s.bleu = std::move(*stats);
  }
  const bool ca = metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_CA") == 0;
  auto lat = instance_latencies(instances, ca ? metric.substr(0, metric.size() - 3) : metric, ca, latency);
  if (!lat.ok()) return lat.error().with_context(s.name);
  s.latency = std::move(*lat);
  return s;
}

Status check_same_sentences(const std::vector<std::string>& names,
                            const std::vector<const std::vector<InstanceRecord>*>& runs) {
  if (runs.empty()) return {};
  const auto& first = *runs.front();
  for (size_t r = 1; r < runs.size(); ++r) {
    const auto& run = *runs[r];
    const std::string which = names[r] + " and " + names.front();
    if (run.size() != first.size()) {
      return invalid_argument(which + " are not on the same sentences: " + std::to_string(run.size()) +
                              " and " + std::to_string(first.size()) + " instances");
    }
    for (size_t i = 0; i < run.size(); ++i) {
      const char* what = nullptr;
      if (run[i].reference != first[i].reference) what = "reference";
      if (run[i].source != first[i].source) what = "source";
      if (what) {
        return invalid_argument(which + " are not on the same sentences: their instance " +
                                std::to_string(i + 1) + " (index " + std::to_string(run[i].index) + " and " +
                                std::to_string(first[i].index) + ") has another " + what);
      }
    }
  }
  return {};
}

}  // namespace gpstream::eval
