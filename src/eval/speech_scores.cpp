#include "eval/speech_scores.h"

#include <algorithm>

#include "eval/python_format.h"

namespace gpstream::eval {

namespace {

std::string ms(double v) {
  return python_float_repr(v) + " ms";
}

}  // namespace

Status validate_speech_instance(const InstanceRecord& r, LatencyUnit unit, bool need_elapsed) {
  const std::string where = "instance " + std::to_string(r.index);
  if (!r.reference) return invalid_argument(where + ": no reference (WER needs one)");
  if (!r.has_delays_key) return invalid_argument(where + ": no \"delays\"");
  if (!(r.source_length > 0) || r.source_length > kMaxSpeechSourceMs) {
    return invalid_argument(where + ": source_length " + ms(r.source_length) +
                            " is not an audio duration in (0, 86400000] ms");
  }
  const size_t units = prediction_units(r.prediction, unit).size();
  if (units != r.delays.size()) {
    return invalid_argument(where + ": the prediction has " + std::to_string(units) +
                            (unit == LatencyUnit::Word ? " words" : " characters") + " but " +
                            std::to_string(r.delays.size()) + " delays");
  }
  for (size_t i = 0; i < r.delays.size(); ++i) {
    const double d = r.delays[i];
    if (d < 0 || d > r.source_length + kSpeechTimeSlackMs) {
      return invalid_argument(where + ": delay " + std::to_string(i) + " (" + ms(d) +
                              ") is outside the audio [0, " + ms(r.source_length) + "]");
    }
    if (i && d < r.delays[i - 1]) {
      return invalid_argument(where + ": delays decrease at " + std::to_string(i) + " (" +
                              ms(r.delays[i - 1]) + " then " + ms(d) + ")");
    }
  }
  if (!need_elapsed) return {};
  if (r.elapsed.size() != r.delays.size()) {
    return invalid_argument(
        where + ": " + std::to_string(r.elapsed.size()) + " elapsed times for " +
        std::to_string(r.delays.size()) +
        " delays (computation-aware latency needs one per word; --no-computation-aware skips it)");
  }
  for (size_t i = 0; i < r.elapsed.size(); ++i) {
    const double e = r.elapsed[i];
    if (e + kSpeechTimeSlackMs < r.delays[i]) {
      return invalid_argument(where + ": elapsed " + std::to_string(i) + " (" + ms(e) +
                              ") is before its delay (" + ms(r.delays[i]) + ")");
    }
    if (i && e < r.elapsed[i - 1]) {
      return invalid_argument(where + ": elapsed times decrease at " + std::to_string(i) + " (" +
                              ms(r.elapsed[i - 1]) + " then " + ms(e) + ")");
    }
  }
  return {};
}

Result<SpeechScoreResult> score_speech_instances(const std::vector<InstanceRecord>& instances,
                                                 const SpeechScoreOptions& options) {
  if (instances.empty()) return invalid_argument("no instances to score");
  std::vector<std::string> refs, hyps;
  refs.reserve(instances.size());
  hyps.reserve(instances.size());
  for (const auto& r : instances) {
    GPS_TRY(validate_speech_instance(r, options.unit, options.computation_aware));
    refs.push_back(*r.reference);
    hyps.push_back(r.prediction);
  }
  SpeechScoreResult out;
  for (size_t k = 0; k < instances.size(); ++k) {
    auto c = wer_counts(refs[k], hyps[k], options.normalization);
    if (!c.ok()) return c.error().with_context("instance " + std::to_string(instances[k].index));
    out.wer += *c;
  }
  if (out.wer.reference_words == 0 && out.wer.hypothesis_words != 0) {
    return invalid_argument(
        "WER is undefined: the references have no words after normalisation but the "
        "predictions have " +
        std::to_string(out.wer.hypothesis_words));
  }
  const double wer = out.wer.reference_words == 0 ? 0.0
                                                  : 100.0 * static_cast<double>(out.wer.edits()) /
                                                        static_cast<double>(out.wer.reference_words);
  out.scores.emplace_back("WER", PyNumber{wer, false});

  const bool any_output = std::any_of(instances.begin(), instances.end(),
                                      [](const InstanceRecord& r) { return !r.delays.empty(); });
  if (!any_output && !options.metrics.empty()) {
    out.warnings.push_back("no instance has any output: WER only, latency is undefined");
    for (const auto& r : instances) out.skipped.push_back(r.index);
  } else if (!options.metrics.empty()) {
    LatencyOptions lo;
    lo.metrics = options.metrics;
    lo.use_ref_len = options.use_ref_len;
    lo.unit = options.unit;
    lo.computation_aware = options.computation_aware;
    lo.source_type = SourceType::Speech;
    GPS_ASSIGN(auto lat, compute_latency(instances, lo));
    for (auto& s : lat.scores) out.scores.push_back(std::move(s));
    out.skipped = std::move(lat.skipped);
    out.warnings = std::move(lat.warnings);
  }
  return out;
}

}  // namespace gpstream::eval
