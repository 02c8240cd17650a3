// SimulEval's latency metrics (evaluator/scorers/latency_scorer.py @ v1.1.4; metrics.md §A), one
// function per metric over (delays, source length, target length), plus the corpus-level scorer
// that picks lengths, skips instances without delays and averages the way SimulEval does.
// `delays` may be SimulEval's `delays` or its computation-aware `elapsed`: the caller chooses.
// Quirks reproduced on purpose (metrics.md A.5) are marked; those not copied are behind options.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "eval/instance_log.h"
#include "eval/python_format.h"
#include "util/error.h"

namespace gpstream::eval {

// Average Lagging (Ma et al. 2019, arXiv 1810.08398) as SimulEval computes it: if d_1 > |X| return
// d_1; γ = |Y|/|X|; AL = (1/τ) Σ_{i=1..τ} (d_i − (i−1)/γ), τ = first i with d_i ≥ |X| (inclusive,
// A.5.3) or |Y*|. |Y| is the reference length by default (A.5.2, SimulEval#11).
double latency_al(std::span<const double> delays, double source_length, double target_length);
// Length-Adaptive AL (Papi et al. 2022, arXiv 2206.05807): AL with γ = max(|Y*|, |Y|)/|X|.
double latency_laal(std::span<const double> delays, double source_length, double target_length);
// Average Proportion (Cho & Esipova 2016, arXiv 1606.02012): Σ d_i / (|X|·|Y|) — |Y| is the
// reference length by default (A.5.2).
double latency_ap(std::span<const double> delays, double source_length, double target_length);
// Differentiable AL (Arivazhagan et al. 2019, arXiv 1906.05218): always the hypothesis length,
// γ = |Y*|/|X|, g'_1 = d_1, g'_i = max(d_i, g'_{i−1} + 1/γ), DAL = (1/|Y*|) Σ (g'_i − (i−1)/γ).
double latency_dal(std::span<const double> delays, double source_length, double target_length);
// AL and LAAL as the paper's released lagging code computes them (Tong et al. 2025, StreamingLLM_GPE
// evaluate/lagging.py; metrics.md A.9), over `unit_delays` (source units read per target word, the end
// marker counting as one) truncated to the hypothesis length: |X| = source words + 1 (the end marker);
// if d_1 > |X| both are d_1; γ_AL = |Y*|/|X|, γ_LAAL = max(len(delays), |Y*|)/|X|; delays > |X| are
// passed over, the sum stops after the first d_i = |X|, and divides by the last index summed. With the
// delays truncated to |Y*|, γ_LAAL = γ_AL, so AL = LAAL: the hypothesis length in both.
struct PaperLagging {
  double al = 0, laal = 0;
};
PaperLagging latency_paper(std::span<const double> unit_delays, double source_units, double target_length);

// StartOffset = d_1; EndOffset = d_last − |X|; RTF = d_last/|X|; NumChunks = |Y*| (text output).
double latency_start_offset(std::span<const double> delays, double source_length, double target_length);
double latency_end_offset(std::span<const double> delays, double source_length, double target_length);
double latency_rtf(std::span<const double> delays, double source_length, double target_length);
double latency_num_chunks(std::span<const double> delays, double source_length, double target_length);

// One instance's latency by its SimulEval name: AL, LAAL, AP, DAL, StartOffset, EndOffset, RTF, NumChunks
// (the functions above); nullptr for any other name.
using MetricFn = double (*)(std::span<const double>, double, double);
MetricFn metric_fn(const std::string& name);

// Average Token Delay (Kano et al. 2022, arXiv 2211.13173), SimulEval's ATDScorer (metrics.md A.3).
// compute_times: per target token compute time (zeros unless computation-aware); same length as delays.
// Text-input branch: source and target tokens last `token_duration` (1 for word delays; the ms per
// word for paced text); source chunk c holds (u_c − u_{c−1})/token_duration tokens.
Result<double> latency_atd_text(std::span<const double> delays, std::span<const double> compute_times,
                                double token_duration = 1.0);
// Speech-input branch (also what SimulEval uses for every instance re-read from instances.log,
// A.5.1): source chunks split into 300 ms tokens (a shorter remainder token last), text target
// tokens of length 0.
Result<double> latency_atd_speech(std::span<const double> delays, std::span<const double> compute_times);
// ATD's compute times from elapsed: successive differences of (elapsed − delays); all zeros when
// elapsed is all zeros (text input).
std::vector<double> atd_compute_times(std::span<const double> delays, std::span<const double> elapsed);

enum class SourceType { Text, Speech };

// Which definition AL and LAAL follow: SimulEval's (the default) or the paper's lagging code
// (latency_paper over InstanceRecord::unit_delays; no other metric is defined there).
enum class LatencyDefinition { SimulEval, Paper };
Result<LatencyDefinition> parse_latency_definition(std::string_view name);

// Reference length (metrics.md A.2): word → len(reference.split(" ")) (the "\n" SimulEval keeps
// stays attached; double spaces count), char → len(reference.strip()) in code points, spaces included.
int64_t reference_length(std::string_view reference, LatencyUnit unit);

// SimulEval's default latency list.
std::vector<std::string> default_latency_metrics();
// All metrics this module computes.
std::vector<std::string> known_latency_metrics();

struct LatencyOptions {
  std::vector<std::string> metrics = default_latency_metrics();
  bool use_ref_len = true;  // false: --no-use-ref-len (target length = |Y*|)
  LatencyUnit unit = LatencyUnit::Word;
  bool computation_aware = false;  // adds <NAME>_CA over `elapsed` after each metric
  SourceType source_type = SourceType::Text;
  // Paced text (metrics.md A.10): ms per source word; delays, elapsed and source_length are in ms.
  // Unset: text delays count words and there is no clock (computation-aware is an error, as in SimulEval).
  std::optional<double> text_word_ms;
  // Reproduce `simuleval --output/--score-only`, which re-reads instances.log as LogInstances: ATD
  // takes the speech-input branch (A.5.1) and the reference length is always counted in words.
  bool log_instance_quirks = false;
  // Paper: AL and LAAL only, from unit_delays (a log without them is an error), word unit, text input, no
  // _CA.
  LatencyDefinition definition = LatencyDefinition::SimulEval;
};

struct LatencyReport {
  std::vector<std::pair<std::string, PyNumber>> scores;  // SimulEval order: M1, M1_CA, M2, M2_CA, ...
  std::vector<int64_t> skipped;                          // instance indices without delays (not in the means)
  std::vector<std::string> warnings;
};

// Corpus latency: the arithmetic mean over instances of each metric (statistics.mean), instances
// with empty delays (or elapsed, for _CA) skipped and reported in `skipped` and `warnings`.
Result<LatencyReport> compute_latency(const std::vector<InstanceRecord>& instances,
                                      const LatencyOptions& options);

// One metric per instance, exactly as compute_latency computes it before averaging (same target length, same
// checks and errors): out[i] for instances[i], std::nullopt where the instance has no delays (no elapsed,
// when computation_aware) and is left out of the mean. Any metric but ATD; options.metrics and
// options.computation_aware are not used, nor is compute_latency's check that text input has a clock for
// `_CA` (the caller checks that). The paired curve bootstrap (eval/curve_bootstrap.h) resamples these values.
Result<std::vector<std::optional<PyNumber>>> instance_latencies(const std::vector<InstanceRecord>& instances,
                                                                const std::string& metric,
                                                                bool computation_aware,
                                                                const LatencyOptions& options);

}  // namespace gpstream::eval
