#include "eval/latency.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "eval/unicode_text.h"

namespace gpstream::eval {

double latency_al(std::span<const double> delays, double source_length, double target_length) {
  GPS_ASSERT(!delays.empty(), "AL of empty delays");
  if (delays[0] > source_length) return delays[0];
  const double gamma = target_length / source_length;
  double al = 0.0;
  size_t tau = 0;
  for (size_t t = 0; t < delays.size(); ++t) {
    al += delays[t] - static_cast<double>(t) / gamma;
    tau = t + 1;
    if (delays[t] >= source_length) break;
  }
  return al / static_cast<double>(tau);
}

double latency_laal(std::span<const double> delays, double source_length, double target_length) {
  return latency_al(delays, source_length, std::max(static_cast<double>(delays.size()), target_length));
}

PaperLagging latency_paper(std::span<const double> unit_delays, double source_units, double target_length) {
  GPS_ASSERT(!unit_delays.empty() && target_length > 0,
             "paper lagging of empty delays or an empty hypothesis");
  if (unit_delays[0] > source_units) return {unit_delays[0], unit_delays[0]};
  const double gamma_al = target_length / source_units;
  const double gamma_laal = std::max(static_cast<double>(unit_delays.size()), target_length) / source_units;
  double al = 0.0, laal = 0.0;
  size_t tau = 0;
  for (size_t t = 0; t < unit_delays.size(); ++t) {
    const double d = unit_delays[t];
    if (d > source_units) continue;
    al += d - static_cast<double>(t) / gamma_al;
    laal += d - static_cast<double>(t) / gamma_laal;
    tau = t + 1;
    if (d == source_units) break;
  }
  return {al / static_cast<double>(tau), laal / static_cast<double>(tau)};
}

double latency_ap(std::span<const double> delays, double source_length, double target_length) {
  double sum = 0.0;
  for (double d : delays) sum += d;  // Python sum(): left to right
  return sum / (source_length * target_length);
}

double latency_dal(std::span<const double> delays, double source_length, double /*target_length*/) {
  GPS_ASSERT(!delays.empty(), "DAL of empty delays");
  const auto n = static_cast<double>(delays.size());
  const double gamma = n / source_length;
  double dal = 0.0;
  double g_prev = 0.0;
  for (size_t i = 0; i < delays.size(); ++i) {
    const double g = i == 0 ? delays[i] : std::max(delays[i], g_prev + 1.0 / gamma);
    dal += g - static_cast<double>(i) / gamma;
    g_prev = g;
  }
  return dal / n;
}

double latency_start_offset(std::span<const double> delays, double, double) {
  return delays.front();
}
double latency_end_offset(std::span<const double> delays, double source_length, double) {
  return delays.back() - source_length;
}
double latency_rtf(std::span<const double> delays, double source_length, double) {
  return delays.back() / source_length;
}
double latency_num_chunks(std::span<const double> delays, double, double) {
  return static_cast<double>(delays.size());
}

namespace {

// The shared part of ATDScorer.compute: target token t of chunk c is matched to source token
// s = min(t − max(0, AccY − AccX), |source tokens up to chunk c|) and delayed by E_t − time(s).
// src_sizes/tgt_sizes: tokens per chunk with a leading 0 entry; tgt_chunk[t] for t = 1..T.
// SimulEval sums the chunk sizes before c for every token (sum(sizes[:c])), which is quadratic in the
// number of chunks; the sums are integers, so prefix tables give the same values in linear time.
Result<double> atd_core(const std::vector<int64_t>& src_sizes, const std::vector<double>& src_time,
                        const std::vector<int64_t>& tgt_sizes, const std::vector<size_t>& tgt_chunk,
                        const std::vector<double>& tgt_time) {
  // prefix(v)[n] = sum(v[:n]) for n = 0..v.size(); a slice past the end is the whole list, as in Python.
  auto prefix_table = [](const std::vector<int64_t>& v) {
    std::vector<int64_t> p(v.size() + 1, 0);
    for (size_t i = 0; i < v.size(); ++i) p[i + 1] = p[i] + v[i];
    return p;
  };
  const std::vector<int64_t> src_prefix = prefix_table(src_sizes);
  const std::vector<int64_t> tgt_prefix = prefix_table(tgt_sizes);
  auto prefix = [](const std::vector<int64_t>& p, size_t n) { return p[std::min(n, p.size() - 1)]; };
  double sum = 0.0;
  const size_t n_tgt = tgt_chunk.size() - 1;
  for (size_t t = 1; t <= n_tgt; ++t) {
    const size_t c = tgt_chunk[t];
    const int64_t acc_x = prefix(src_prefix, c);
    const int64_t acc_y = prefix(tgt_prefix, c);
    const int64_t big_s = static_cast<int64_t>(t) - std::max<int64_t>(0, acc_y - acc_x);
    const int64_t current = prefix(src_prefix, c + 1);
    const int64_t s = big_s < current ? big_s : current;
    if (s < 0 || static_cast<size_t>(s) >= src_time.size()) {
      return invalid_argument("ATD: delays are not non-decreasing (source token " + std::to_string(s) +
                              " of " + std::to_string(src_time.size() - 1) + ")");
    }
    sum += tgt_time[t] - src_time[static_cast<size_t>(s)];
  }
  return sum / static_cast<double>(n_tgt);
}

// Target chunks (runs of equal consecutive delays) and token end times E_t = max(d_t, E_{t−1}) + len +
// compute.
void atd_target(std::span<const double> delays, std::span<const double> compute, double token_len,
                std::vector<int64_t>* sizes, std::vector<size_t>* chunk_of, std::vector<double>* times) {
  sizes->assign(1, 0);
  chunk_of->assign(1, 0);
  times->assign(1, 0.0);
  for (size_t i = 0; i < delays.size(); ++i) {
    if (i == 0 || delays[i] != delays[i - 1]) {
      sizes->push_back(1);
    } else {
      sizes->back() += 1;
    }
    chunk_of->push_back(sizes->size() - 1);
    const double start = std::max(delays[i], times->back());
    times->push_back(start + token_len + compute[i]);
  }
}

std::vector<double> unique_in_order(std::span<const double> delays) {
  std::vector<double> out;
  std::set<double> seen;
  for (double d : delays) {
    if (seen.insert(d).second) out.push_back(d);
  }
  return out;
}

}  // namespace

// ATD lays out one time slot per source unit read, so the delays set its memory: a log whose delays read more
// source units than this (summed over increases) is refused rather than allocated (real streams are far
// shorter).
constexpr double kMaxAtdSourceUnits = double{1 << 22};

Result<double> latency_atd_text(std::span<const double> delays, std::span<const double> compute_times,
                                double token_duration) {
  if (delays.empty()) return invalid_argument("ATD: no delays");
  if (compute_times.size() != delays.size())
    return invalid_argument("ATD: compute times and delays differ in length");
  if (!(token_duration > 0)) return invalid_argument("ATD: token duration must be positive");
  // Word units: delays count source words. (For paced text the ms values are divided by the word
  // duration here and the result multiplied back, i.e. tokens last token_duration ms.)
  std::vector<double> d(delays.begin(), delays.end());
  std::vector<double> ct(compute_times.begin(), compute_times.end());
  if (token_duration != 1.0) {
    for (auto& x : d) {
      x /= token_duration;
      const double r = std::round(x);
      if (std::fabs(x - r) < 1e-6) x = r;
    }
    for (auto& x : ct) x /= token_duration;
  }
  for (double x : d)
    if (!std::isfinite(x)) return invalid_argument("ATD: delays must be finite");
  const auto uniq = unique_in_order(d);
  double read = 0;  // source words laid out so far
  std::vector<int64_t> src_sizes{0};
  std::vector<double> src_time{0.0};
  double prev = 0.0;
  for (double u : uniq) {
    const double size = u - prev;
    if (std::fabs(size) > kMaxAtdSourceUnits || (size > 0 && (read += size) > kMaxAtdSourceUnits))
      return invalid_argument("ATD: the delays read more than " +
                              std::to_string(static_cast<int64_t>(kMaxAtdSourceUnits)) + " source words");
    prev = u;
    if (size != std::floor(size))
      return invalid_argument("ATD (text input): delays must be whole source words");
    const auto n = static_cast<int64_t>(size);
    src_sizes.push_back(n);
    for (int64_t k = 0; k < n; ++k) src_time.push_back(src_time.back() + 1.0);
  }
  std::vector<int64_t> tgt_sizes;
  std::vector<size_t> tgt_chunk;
  std::vector<double> tgt_time;
  atd_target(d, ct, 1.0, &tgt_sizes, &tgt_chunk, &tgt_time);
  GPS_ASSIGN(double v, atd_core(src_sizes, src_time, tgt_sizes, tgt_chunk, tgt_time));
  return v * token_duration;
}

Result<double> latency_atd_speech(std::span<const double> delays, std::span<const double> compute_times) {
  constexpr double kSourceTokenMs = 300.0;  // SimulEval's hard-coded 300 ms per source "word"
  if (delays.empty()) return invalid_argument("ATD: no delays");
  if (compute_times.size() != delays.size())
    return invalid_argument("ATD: compute times and delays differ in length");
  for (double x : delays)
    if (!std::isfinite(x)) return invalid_argument("ATD: delays must be finite");
  const auto uniq = unique_in_order(delays);
  double read = 0;  // ms of source laid out so far
  std::vector<int64_t> src_sizes{0};
  std::vector<double> src_time{0.0};
  double prev = 0.0;
  for (double u : uniq) {
    const double dur = u - prev;
    if (std::fabs(dur) > kMaxAtdSourceUnits * kSourceTokenMs ||
        (dur > 0 && (read += dur) > kMaxAtdSourceUnits * kSourceTokenMs))
      return invalid_argument("ATD: the delays read more than " +
                              std::to_string(static_cast<int64_t>(kMaxAtdSourceUnits * kSourceTokenMs)) +
                              " ms of source");
    prev = u;
    const double num = std::floor(dur / kSourceTokenMs);
    const double rest = dur - num * kSourceTokenMs;
    int64_t count = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(num); ++k, ++count)
      src_time.push_back(src_time.back() + kSourceTokenMs);
    if (rest != 0) {
      src_time.push_back(src_time.back() + rest);
      ++count;
    }
    src_sizes.push_back(count);
  }
  std::vector<int64_t> tgt_sizes;
  std::vector<size_t> tgt_chunk;
  std::vector<double> tgt_time;
  atd_target(delays, compute_times, 0.0, &tgt_sizes, &tgt_chunk, &tgt_time);
  return atd_core(src_sizes, src_time, tgt_sizes, tgt_chunk, tgt_time);
}

std::vector<double> atd_compute_times(std::span<const double> delays, std::span<const double> elapsed) {
  const size_t n = std::min(delays.size(), elapsed.size());
  std::vector<double> out(n, 0.0);
  const bool all_zero = std::all_of(elapsed.begin(), elapsed.end(), [](double e) { return e == 0.0; });
  if (all_zero && elapsed.size() == delays.size()) return out;
  double prev = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double ce = elapsed[i] - delays[i];
    out[i] = ce - prev;
    prev = ce;
  }
  return out;
}

int64_t reference_length(std::string_view reference, LatencyUnit unit) {
  if (unit == LatencyUnit::Word) {
    return static_cast<int64_t>(std::count(reference.begin(), reference.end(), ' ')) + 1;
  }
  return static_cast<int64_t>(utf8_length(python_strip(reference)));
}

Result<LatencyDefinition> parse_latency_definition(std::string_view name) {
  if (name == "simuleval") return LatencyDefinition::SimulEval;
  if (name == "paper") return LatencyDefinition::Paper;
  return invalid_argument("unknown latency definition '" + std::string(name) + "' (simuleval or paper)");
}

std::vector<std::string> default_latency_metrics() {
  return {"LAAL", "AL", "AP", "DAL", "ATD"};
}
std::vector<std::string> known_latency_metrics() {
  return {"AL", "LAAL", "AP", "DAL", "ATD", "StartOffset", "EndOffset", "RTF", "NumChunks"};
}

MetricFn metric_fn(const std::string& name) {
  if (name == "AL") return latency_al;
  if (name == "LAAL") return latency_laal;
  if (name == "AP") return latency_ap;
  if (name == "DAL") return latency_dal;
  if (name == "StartOffset") return latency_start_offset;
  if (name == "EndOffset") return latency_end_offset;
  if (name == "RTF") return latency_rtf;
  if (name == "NumChunks") return latency_num_chunks;
  return nullptr;
}

namespace {

// The paper's AL or LAAL of one instance (latency_paper): nullopt for an empty hypothesis, which the paper's
// code cannot score (it indexes delays[0]) and which is left out here as SimulEval leaves out empty delays.
Result<std::optional<PyNumber>> paper_instance_value(const InstanceRecord& ins, const std::string& metric) {
  const std::string where = "instance " + std::to_string(ins.index);
  const size_t hypothesis_words = python_split(ins.prediction).size();
  if (hypothesis_words == 0) return std::optional<PyNumber>{};
  if (ins.unit_delays.empty()) {
    return invalid_argument(
        where +
        ": no \"unit_delays\" (the paper's latency counts the end marker as a source unit; "
        "gpstream eval records them, SimulEval and older gpstream logs do not)");
  }
  const size_t n = std::min(ins.unit_delays.size(), hypothesis_words);  // wait_lagging[:tgt_len]
  const double source_units = static_cast<double>(python_split(ins.source).size()) + 1;
  const PaperLagging lag =
      latency_paper(std::span(ins.unit_delays).first(n), source_units, static_cast<double>(hypothesis_words));
  const bool early = ins.unit_delays[0] > source_units;  // the paper returns delays[0], an int
  return std::optional<PyNumber>{PyNumber{metric == "AL" ? lag.al : lag.laal, early}};
}

Status check_paper_options(const std::vector<std::string>& metrics, bool computation_aware,
                           const LatencyOptions& options) {
  for (const auto& m : metrics)
    if (m != "AL" && m != "LAAL")
      return invalid_argument("the paper's latency definition has AL and LAAL only, not " + m);
  if (computation_aware)
    return invalid_argument("the paper's latency definition has no computation-aware variant");
  if (options.unit != LatencyUnit::Word || options.source_type != SourceType::Text)
    return invalid_argument("the paper's latency definition counts words of text input");
  return {};
}

// One instance's value of a metric other than ATD over `delays` (or `elapsed`, computation-aware): nullopt
// when those are empty (SimulEval skips the instance). name = the metric's reported name, for messages.
Result<std::optional<PyNumber>> instance_value(const InstanceRecord& ins, const std::string& metric,
                                               const std::string& name, bool ca,
                                               const LatencyOptions& options) {
  if (options.definition == LatencyDefinition::Paper) return paper_instance_value(ins, metric);
  const std::string where = "instance " + std::to_string(ins.index);
  const LatencyUnit ref_unit = options.log_instance_quirks ? LatencyUnit::Word : options.unit;
  const auto& ts = ca ? ins.elapsed : ins.delays;
  const bool ts_int = ca ? ins.elapsed_int : ins.delays_int;
  if (ts.empty()) return std::optional<PyNumber>{};
  double tgt_len = static_cast<double>(ts.size());
  if (options.use_ref_len && ins.reference)
    tgt_len = static_cast<double>(reference_length(*ins.reference, ref_unit));
  const double src_len = ins.source_length;
  const bool divides =
      metric == "AL" || metric == "LAAL" || metric == "AP" || metric == "DAL" || metric == "RTF";
  const bool early_al = (metric == "AL" || metric == "LAAL") && ts[0] > src_len;
  if (divides && !early_al && !(src_len > 0)) {
    return invalid_argument(where + ": source_length " + python_float_repr(src_len) + " makes " + name +
                            " undefined (division by zero in SimulEval)");
  }
  if ((metric == "AL" || metric == "AP") && !early_al && tgt_len == 0) {
    return invalid_argument(where + ": target length 0 (empty reference) makes " + name + " undefined");
  }
  const double v = metric_fn(metric)(ts, src_len, tgt_len);
  bool is_int = false;
  if (metric == "StartOffset") is_int = ts_int;
  if (metric == "EndOffset") is_int = ts_int && ins.source_length_int;
  if (metric == "NumChunks") is_int = true;
  if (early_al) is_int = ts_int;
  return std::optional<PyNumber>{PyNumber{v, is_int}};
}

}  // namespace

Result<std::vector<std::optional<PyNumber>>> instance_latencies(const std::vector<InstanceRecord>& instances,
                                                                const std::string& metric,
                                                                bool computation_aware,
                                                                const LatencyOptions& options) {
  if (!metric_fn(metric)) {
    return invalid_argument(
        "latency metric '" + metric +
        "' has no per-instance value here (known: AL LAAL AP DAL StartOffset EndOffset RTF "
        "NumChunks)");
  }
  if (options.definition == LatencyDefinition::Paper)
    GPS_TRY(check_paper_options({metric}, computation_aware, options));
  const std::string name = computation_aware ? metric + "_CA" : metric;
  std::vector<std::optional<PyNumber>> out;
  out.reserve(instances.size());
  for (const auto& ins : instances) {
    GPS_ASSIGN(auto v, instance_value(ins, metric, name, computation_aware, options));
    out.push_back(v);
  }
  return out;
}

Result<LatencyReport> compute_latency(const std::vector<InstanceRecord>& instances,
                                      const LatencyOptions& options) {
  for (const auto& m : options.metrics) {
    if (m != "ATD" && !metric_fn(m)) {
      return invalid_argument("unknown latency metric '" + m +
                              "' (known: AL LAAL AP DAL ATD StartOffset EndOffset RTF NumChunks)");
    }
  }
  if (options.definition == LatencyDefinition::Paper)
    GPS_TRY(check_paper_options(options.metrics, options.computation_aware, options));
  if (options.text_word_ms && !(*options.text_word_ms > 0))
    return invalid_argument("pace: ms per word must be positive");
  if (options.computation_aware && options.source_type == SourceType::Text && !options.text_word_ms &&
      !options.log_instance_quirks) {
    return invalid_argument(
        "computation-aware latency needs a clock: text input without a pace has none (SimulEval raises "
        "\"The computation aware latency is not supported on text input.\"); give a pace (words per second)");
  }
  LatencyReport report;
  std::unordered_set<int64_t> skipped_set;
  auto skip = [&](const InstanceRecord& ins, const std::string& metric, const char* what) {
    if (std::string(what) == "delay" && skipped_set.insert(ins.index).second)
      report.skipped.push_back(ins.index);
    report.warnings.push_back(std::to_string(ins.index) + " instance has no " + what +
                              " information. Skipped (" + metric + ")");
  };
  const bool atd_speech = options.log_instance_quirks || options.source_type == SourceType::Speech;

  for (const auto& metric : options.metrics) {
    for (int ca = 0; ca <= (options.computation_aware ? 1 : 0); ++ca) {
      const std::string name = ca ? metric + "_CA" : metric;
      std::vector<PyNumber> values;
      for (const auto& ins : instances) {
        const std::string where = "instance " + std::to_string(ins.index);
        if (metric == "ATD") {
          // ATDScorer reads `delays` (and `elapsed` for compute time when computation-aware).
          if (ins.delays.empty()) {
            skip(ins, name, "delay");
            continue;
          }
          std::vector<double> compute(ins.delays.size(), 0.0);
          if (ca) {
            if (ins.elapsed.empty()) {
              skip(ins, name, "computational delay");
              continue;
            }
            if (ins.elapsed.size() != ins.delays.size()) {
              return format_error(where + ": " + std::to_string(ins.elapsed.size()) + " elapsed values for " +
                                  std::to_string(ins.delays.size()) + " delays");
            }
            compute = atd_compute_times(ins.delays, ins.elapsed);
          }
          auto v = atd_speech ? latency_atd_speech(ins.delays, compute)
                              : latency_atd_text(ins.delays, compute, options.text_word_ms.value_or(1.0));
          if (!v.ok()) return v.error().with_context(where);
          values.push_back({*v, false});
          continue;
        }
        GPS_ASSIGN(auto v, instance_value(ins, metric, name, ca != 0, options));
        if (!v) {
          skip(ins, name, "delay");
          continue;
        }
        values.push_back(*v);
      }
      if (values.empty()) {
        return invalid_argument(name + ": no instance has delays to score (" +
                                std::to_string(instances.size()) + " instances)");
      }
      if (options.definition == LatencyDefinition::Paper) {  // sum(LAAL) / len(LAAL), left to right
        double sum = 0;
        for (const PyNumber& v : values) sum += v.value;
        report.scores.emplace_back(name, PyNumber{sum / static_cast<double>(values.size()), false});
      } else {
        report.scores.emplace_back(name, python_mean(values));
      }
    }
  }
  return report;
}

}  // namespace gpstream::eval
