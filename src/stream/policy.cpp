// wait-k, read-all, confidence, local-agreement and alignatt policies, choosing one by name, and naming
// their settings.
#include "stream/policy.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

namespace gpstream::stream {

Action WaitKPolicy::decide(const PolicyState& s) const {
  // Units wanted before the next word: k + words written, capped at M + 1 once M is known.
  long want = static_cast<long>(k_) + s.words_written;
  if (s.end_chosen_at >= 0 && end_after_source_) want = std::max<long>(want, s.end_chosen_at + 1L);
  if (s.source_finished) want = std::min<long>(want, s.n_words + 1);
  return s.units_read < want ? Action::Read : Action::Write;
}

Action ReadAllPolicy::decide(const PolicyState& s) const {
  if (!s.source_finished) return Action::Read;
  return s.units_read < s.n_words + 1 ? Action::Read : Action::Write;
}

namespace {

// The decisions the lag-bounded signal policies (confidence, alignatt) take before reading their signal:
// write when nothing is left to read; read up to the unit after the end marker was chosen (end_after_source);
// read below the minimum lag and write at the maximum.
std::optional<Action> bounded_decision(const PolicyState& s, int min_lag, int max_lag,
                                       bool end_after_source) {
  const long all = static_cast<long>(s.n_words) + 1;
  if (s.source_finished && s.units_read >= all) return Action::Write;  // nothing left to read
  if (s.end_chosen_at >= 0 && end_after_source && s.units_read <= s.end_chosen_at) return Action::Read;
  const long lag = static_cast<long>(s.units_read) - s.words_written;
  if (lag < min_lag) return Action::Read;
  if (lag >= max_lag) return Action::Write;
  return std::nullopt;
}

}  // namespace

Action ConfidencePolicy::decide(const PolicyState& s) const {
  if (auto bounded = bounded_decision(s, min_lag_, max_lag_, end_after_source_)) return *bounded;
  // No row has seen the units read yet: stop reading, so that the next decision has fresh logits.
  if (!s.confidence) return Action::Write;
  return *s.confidence >= tau_ ? Action::Write : Action::Read;
}

Action LocalAgreementPolicy::decide(const PolicyState& s) const {
  const long all = static_cast<long>(s.n_words) + 1;
  if (s.source_finished && s.units_read >= all) return Action::Write;  // nothing left to read
  const long lag = static_cast<long>(s.units_read) - s.words_written;
  if (lag < min_lag_) return Action::Read;
  // No continuation has seen the units read yet: stop reading, so that the session decodes one.
  if (!s.agreement) return Action::Write;
  if (s.agreement->available <= 0) return Action::Read;  // nothing to write before the next unit
  if (lag >= max_lag_) return Action::Write;
  return s.agreement->agreed > 0 ? Action::Write : Action::Read;
}

Action AlignAttPolicy::decide(const PolicyState& s) const {
  if (auto bounded = bounded_decision(s, min_lag_, max_lag_, end_after_source_)) return *bounded;
  // No row has seen the units read yet: stop reading, so that the next decision has a fresh row.
  if (!s.attended_unit) return Action::Write;
  return *s.attended_unit >= static_cast<long>(s.units_read) - frames_ ? Action::Read : Action::Write;
}

std::optional<PolicyKind> parse_policy_name(std::string_view name) {
  if (name == "wait-k") return PolicyKind::WaitK;
  if (name == "confidence") return PolicyKind::Confidence;
  if (name == "local-agreement") return PolicyKind::LocalAgreement;
  if (name == "alignatt") return PolicyKind::AlignAtt;
  return std::nullopt;
}

const char* policy_name(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::Confidence:
      return "confidence";
    case PolicyKind::LocalAgreement:
      return "local-agreement";
    case PolicyKind::AlignAtt:
      return "alignatt";
    case PolicyKind::WaitK:
      break;
  }
  return "wait-k";
}

std::string policy_names() {
  return "wait-k, confidence, local-agreement, alignatt";
}

namespace {

template <typename T>
std::string shortest(T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

Status validate_policy(const PolicySpec& spec) {
  if (!std::isfinite(spec.tau) || spec.tau < 0 || spec.tau > 1)
    return invalid_argument("confidence policy: tau must be a probability in [0, 1], got " +
                            shortest(spec.tau));
  const std::string bound = std::to_string(kMaxPolicyLag);
  const std::string what =
      std::string(policy_name(spec.kind == PolicyKind::WaitK ? PolicyKind::Confidence : spec.kind)) +
      " policy: ";
  if (spec.min_lag < 0 || spec.min_lag > kMaxPolicyLag)
    return invalid_argument(what + "min_lag must be in [0, " + bound + "], got " +
                            std::to_string(spec.min_lag));
  if (spec.max_lag < 1 || spec.max_lag > kMaxPolicyLag)
    return invalid_argument(what + "max_lag must be in [1, " + bound + "], got " +
                            std::to_string(spec.max_lag));
  if (spec.min_lag > spec.max_lag)
    return invalid_argument(what + "min_lag (" + std::to_string(spec.min_lag) +
                            ") is greater than max_lag (" + std::to_string(spec.max_lag) + ")");
  if (spec.frames < 1 || spec.frames > kMaxPolicyLag)
    return invalid_argument("alignatt policy: frames must be in [1, " + bound + "], got " +
                            std::to_string(spec.frames));
  if (spec.agreement < 2 || spec.agreement > kMaxPolicyAgreement)
    return invalid_argument("local-agreement policy: agreement must be in [2, " +
                            std::to_string(kMaxPolicyAgreement) + "], got " + std::to_string(spec.agreement));
  if (spec.layers.size() > static_cast<size_t>(kMaxPolicyLayers))
    return invalid_argument("alignatt policy: more than " + std::to_string(kMaxPolicyLayers) + " layers");
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    if (spec.layers[i] < 0)
      return invalid_argument("alignatt policy: a layer must be at least 0, got " +
                              std::to_string(spec.layers[i]));
    if (std::find(spec.layers.begin(), spec.layers.begin() + static_cast<std::ptrdiff_t>(i),
                  spec.layers[i]) != spec.layers.begin() + static_cast<std::ptrdiff_t>(i))
      return invalid_argument("alignatt policy: layer " + std::to_string(spec.layers[i]) + " given twice");
  }
  return {};
}

Result<std::unique_ptr<Policy>> make_policy(const PolicySpec& spec, int k, bool end_after_source) {
  if (spec.kind == PolicyKind::WaitK) {
    if (k < 1) return invalid_argument("wait-k: k must be at least 1 (got " + std::to_string(k) + ")");
    return std::unique_ptr<Policy>(std::make_unique<WaitKPolicy>(k, end_after_source));
  }
  GPS_TRY(validate_policy(spec));
  if (spec.kind == PolicyKind::LocalAgreement)
    return std::unique_ptr<Policy>(std::make_unique<LocalAgreementPolicy>(spec.min_lag, spec.max_lag));
  if (spec.kind == PolicyKind::AlignAtt)
    return std::unique_ptr<Policy>(
        std::make_unique<AlignAttPolicy>(spec.frames, spec.min_lag, spec.max_lag, end_after_source));
  return std::unique_ptr<Policy>(
      std::make_unique<ConfidencePolicy>(spec.tau, spec.min_lag, spec.max_lag, end_after_source));
}

std::string policy_setting(const PolicySpec& spec, int k) {
  switch (spec.kind) {
    case PolicyKind::Confidence:
      return shortest(static_cast<float>(spec.tau));  // as given on the command line, not its double
    case PolicyKind::LocalAgreement:
      return std::to_string(spec.min_lag) + "-" + std::to_string(spec.max_lag) +
             (spec.agreement != PolicySpec{}.agreement ? "-agree" + std::to_string(spec.agreement) : "");
    case PolicyKind::AlignAtt:
      return std::to_string(spec.frames);
    case PolicyKind::WaitK:
      break;
  }
  return std::to_string(k);
}

namespace {

// How a policy's settings are named: the prefix of a figure's point label and of a run folder's suffix.
struct SettingNames {
  const char* label;
  const char* folder;
};

SettingNames setting_names(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::Confidence:
      return {"tau=", "-confidence-tau"};
    case PolicyKind::LocalAgreement:
      return {"lag=", "-local-agreement-lag"};
    case PolicyKind::AlignAtt:
      return {"f=", "-alignatt-f"};
    case PolicyKind::WaitK:
      break;
  }
  return {"k=", "-k"};
}

}  // namespace

std::string policy_setting_label(const PolicySpec& spec, int k) {
  return setting_names(spec.kind).label + policy_setting(spec, k);
}

std::string policy_folder_suffix(const PolicySpec& spec, int k) {
  return setting_names(spec.kind).folder + policy_setting(spec, k);
}

}  // namespace gpstream::stream
