// Paired bootstrap comparison of two quality–latency curves (docs/evaluation.md, "Comparing two curves").
// Quality is BLEU (text) or WER % (speech), each a corpus score of summed per-sentence statistics.
// A curve is a set of settings (wait-k's k = 1..9, a policy's tau values), each evaluated on the same N
// sentences. S times (default 1000), N sentence indices are drawn with replacement, the same indices for
// every setting of both curves (gpstream's paired-bootstrap generator: splitmix64 + Lemire bounded draws,
// seed 12345 by default, drawn in the order eval/bootstrap.cpp draws them). In each resample every setting's
// corpus BLEU is recomputed from the summed sentence statistics (eval/bleu.h) and its latency is the mean of
// the resampled sentences' per-sentence latencies (SimulEval's statistics.mean, sentences without delays left
// out, as `gpstream score` does); each curve is then interpolated linearly at the target latencies
// (interpolate_curve), and the BLEU difference system − baseline is kept where both curves reach the target.
// The 95% interval is the percentile interval of those differences (sorted, bounds at m//40 from each end of
// the m kept ones, as eval/bootstrap.h's difference interval).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/bleu.h"
#include "eval/instance_log.h"
#include "eval/latency.h"
#include "eval/python_format.h"
#include "eval/wer.h"
#include "util/error.h"

namespace gpstream::eval {

enum class CurveQuality { Bleu, Wer };

// One setting of a curve (one `eval --output` run) as per-sentence statistics: bleu[i] (or wer[i]: the
// quality the comparison uses; the other may be empty) and latency[i] are sentence i's; latency[i] is
// nullopt for a sentence without delays (left out of the latency mean).
struct CurveSetting {
  std::string name;  // for messages and reports (the run's folder)
  std::vector<BleuStats> bleu;
  std::vector<WerCounts> wer;
  std::vector<std::optional<PyNumber>> latency;
};

struct CurvePoint {
  double latency = 0.0;
  double quality = 0.0;  // BLEU, or WER in percent
};

// The piecewise-linear curve through `points` at latency x. The points are sorted by latency, so the curve is
// a function of latency whatever order the settings came in; points at one latency are merged into one whose
// quality is their mean. Quality need not improve with latency: a point below its neighbours stays a dip of
// the curve (nothing is smoothed or dropped). x equal to a point's latency gives that point's BLEU; x
// strictly between two neighbouring latencies the straight line between them. x below the lowest or above the
// highest latency (or no points) gives nullopt: there is no extrapolation. x equal to a point's latency gives
// its quality.
std::optional<double> interpolate_curve(std::vector<CurvePoint> points, double x);

struct CurveCompareOptions {
  std::vector<double> at;  // target latencies, in the settings' latency unit
  CurveQuality quality = CurveQuality::Bleu;
  BleuOptions bleu;  // compute_bleu of the summed statistics (the tokenizer is the statistics' business)
  int n_samples = 1000;
  uint64_t seed = 12345;
};

struct CurveDifference {
  double at = 0.0;
  // On the full set: each curve's quality at `at` and system − baseline (nullopt: `at` is outside that
  // curve's latency range). For WER a negative difference is the system's gain.
  std::optional<double> baseline, system, diff;
  // Over the resamples in which both curves reach `at` (nullopt when none does): mean difference and the
  // 95% percentile interval [lower, upper]. With n_out_of_range > 0 they describe only the resamples that
  // reach `at`; the counts say how many do not.
  std::optional<double> mean, lower, upper;
  bool excludes_zero = false;  // lower > 0 or upper < 0, and `diff` is defined (both curves reach `at`)
  int n_valid = 0;             // resamples in which both curves reach `at`
  int n_out_of_range = 0;      // resamples in which at least one does not (n_valid + n_out_of_range = S)
  int n_baseline_out_of_range = 0;
  int n_system_out_of_range = 0;
};

struct CurveComparison {
  std::vector<CurvePoint> baseline_points;  // full set, one per setting, in the settings' order
  std::vector<CurvePoint> system_points;
  std::vector<CurveDifference> at;  // one per options.at, in that order
  size_t n_sentences = 0;
  int n_samples = 0;
  uint64_t seed = 0;
};

// The full-set point of one setting: corpus BLEU (or WER %) of the summed statistics and the mean latency
// over the sentences that have one (nullopt latency: none has).
struct SettingPoint {
  double quality = 0.0;
  std::optional<double> latency;
};
SettingPoint setting_point(const CurveSetting& setting, const CurveCompareOptions& options);

// Every setting of both curves must have the same number of sentences (at least one), its statistics of the
// options' quality (bleu or wer) one per sentence as latency is; each curve at least one setting, each
// full-set setting a latency; n_samples >= 1; every target finite. A setting whose resampled sentences all
// lack a latency drops out of that resample's curve.
Result<CurveComparison> compare_curves(const std::vector<CurveSetting>& baseline,
                                       const std::vector<CurveSetting>& system,
                                       const CurveCompareOptions& options);

// A setting from one run's instances.log: each instance's BLEU statistics (bleu's tokenizer) or WER counts
// (basic normalisation, as `score --speech`) against its reference, as `quality` says (an instance without a
// reference is an error), and its `metric` (e.g. "LAAL"; "_CA" for the computation-aware value over
// `elapsed`) as instance_latencies gives it with `latency`'s length options.
Result<CurveSetting> curve_setting_from_instances(std::string name,
                                                  const std::vector<InstanceRecord>& instances,
                                                  const std::string& metric, CurveQuality quality,
                                                  const BleuOptions& bleu,
                                                  const LatencyOptions& latency = {});

// All runs must be on the same sentences: the same number of instances, and position by position the same
// reference and the same source. The error names both runs (by `names`) and the first difference.
Status check_same_sentences(const std::vector<std::string>& names,
                            const std::vector<const std::vector<InstanceRecord>*>& runs);

}  // namespace gpstream::eval
