#include "stream/session_settings.h"

#include <charconv>
#include <cmath>

namespace gpstream::stream {

namespace {

std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The checks the command line makes when it parses its options, for the front ends that do not parse one.
Status check_ranges(const SessionSettings& s) {
  if (s.k < 0 || s.k > kMaxPolicyLag)
    return invalid_argument("-k: wait-k's lag is 1 to " + std::to_string(kMaxPolicyLag) +
                            " (0: the model's)");
  if (s.max_tokens < 1 || s.max_tokens > kMaxTokensLimit)
    return invalid_argument("--max-tokens: 1 to " + std::to_string(kMaxTokensLimit));
  if (s.beam < 0 || s.beam > kMaxBeam)
    return invalid_argument("--beam: 1 to " + std::to_string(kMaxBeam) + " (0: the model's)");
  if (s.sentence_ends != "model" && s.sentence_ends != "punctuation")
    return invalid_argument("--sentence-ends: model or punctuation, not '" + s.sentence_ends + "'");
  if (s.sentence_end_lookahead != "on" && s.sentence_end_lookahead != "off")
    return invalid_argument("--sentence-end-lookahead: on or off, not '" + s.sentence_end_lookahead + "'");
  if (!s.end_after_source.empty() && s.end_after_source != "on" && s.end_after_source != "off")
    return invalid_argument("--end-after-source: on or off, not '" + s.end_after_source + "'");
  if (!(std::abs(s.sentence_end_bias) <= kMaxSentenceEndBias))
    return invalid_argument("--sentence-end-bias: -" + shortest(kMaxSentenceEndBias) + " to " +
                            shortest(kMaxSentenceEndBias));
  if (!(s.temperature >= 0 && s.temperature <= kMaxTemperature))
    return invalid_argument("--temperature: 0 to " + shortest(kMaxTemperature));
  if (!(s.top_p >= 0 && s.top_p <= 1)) return invalid_argument("--top-p: 0 to 1");
  if (s.top_k < 0 || s.top_k > kMaxTopK) return invalid_argument("--top-k: 0 to " + std::to_string(kMaxTopK));
  if (!(s.repetition_penalty >= kMinRepetitionPenalty && s.repetition_penalty <= kMaxRepetitionPenalty))
    return invalid_argument("--repetition-penalty: " + shortest(kMinRepetitionPenalty) + " to " +
                            shortest(kMaxRepetitionPenalty));
  if (!s.policy.empty() && !parse_policy_name(s.policy))
    return invalid_argument("--policy: unknown '" + s.policy + "' (known: " + policy_names() + ")");
  return {};
}

}  // namespace

Result<SessionOptions> session_options(const StreamingModel& m, const SessionSettings& s) {
  GPS_TRY(check_ranges(s));
  SessionOptions so = m.default_options();
  if (s.sentence_ends == "model") so.sentence_ends = m.sentence_ends();
  so.sentence_end_bias = s.sentence_end_bias;
  so.sentence_end_lookahead = s.sentence_end_lookahead == "on";
  if (!s.policy.empty()) so.policy.kind = *parse_policy_name(s.policy);
  const std::string name = policy_name(so.policy.kind);
  if (so.policy.kind == PolicyKind::WaitK) {
    if (s.tau >= 0 || s.min_lag >= 0 || s.max_lag >= 0 || s.frames > 0 || !s.layers.empty() ||
        s.agreement > 0)
      return invalid_argument(
          "--tau, --frames, --layers, --agreement, --min-lag and --max-lag set the adaptive policies (--tau "
          "confidence's, --frames and --layers alignatt's, --agreement local-agreement's), and the policy is "
          "wait-k: add --policy");
  } else {
    if (s.k >= 1)
      return invalid_argument("-k sets wait-k's lag, and the policy is " + name +
                              ": give --min-lag and --max-lag, or --policy wait-k");
    if (s.tau >= 0 && so.policy.kind != PolicyKind::Confidence)
      return invalid_argument("--tau sets the confidence policy, and the policy is " + name +
                              ": give --min-lag and --max-lag, or --policy confidence");
    if ((s.frames > 0 || !s.layers.empty()) && so.policy.kind != PolicyKind::AlignAtt)
      return invalid_argument("--frames and --layers set the alignatt policy, and the policy is " + name +
                              ": add --policy alignatt");
    if (s.agreement > 0 && so.policy.kind != PolicyKind::LocalAgreement)
      return invalid_argument("--agreement sets the local-agreement policy, and the policy is " + name +
                              ": add --policy local-agreement");
    if (s.tau >= 0) so.policy.tau = s.tau;
    if (s.agreement > 0) so.policy.agreement = s.agreement;
    if (s.frames > 0) so.policy.frames = s.frames;
    if (!s.layers.empty()) so.policy.layers = s.layers;
    for (int l : so.policy.layers)
      if (l >= m.model->config().n_layer)
        return invalid_argument("--layers: layer " + std::to_string(l) + " of a model with " +
                                std::to_string(m.model->config().n_layer) + " layers (0 to " +
                                std::to_string(m.model->config().n_layer - 1) + ")");
    if (s.min_lag >= 0) so.policy.min_lag = s.min_lag;
    if (s.max_lag >= 0) so.policy.max_lag = s.max_lag;
  }
  if (s.k >= 1) so.k = s.k;
  if (!s.paradigm.empty()) {
    auto p = parse_paradigm(s.paradigm);
    if (!p)
      return invalid_argument("--paradigm: unknown '" + s.paradigm + "' (known: " + paradigm_names() + ")");
    so.paradigm = *p;
  }
  if (!s.phi.empty()) {
    auto phi = Phi::parse(s.phi);
    if (!phi) return invalid_argument("--phi: expected a number >= 0 or S, got '" + s.phi + "'");
    so.phi = *phi;
  }
  GPS_TRY(validate_policy(so.policy));
  GPS_TRY(check_policy(so.policy, so.paradigm));
  if (!s.end_after_source.empty()) so.end_after_source = s.end_after_source == "on";
  so.max_target_tokens = s.max_tokens;
  so.decoding = {s.temperature, s.top_k, s.top_p, s.repetition_penalty, s.seed};
  if (s.beam > 0) so.beam = s.beam;
  if (so.beam > 1 && (s.temperature > 0 || s.repetition_penalty != 1.0f))
    return invalid_argument(
        "--beam " + std::to_string(so.beam) +
        " (word beam search) needs greedy decoding: no --temperature, no --repetition-penalty" +
        (s.beam > 0 ? "" : " (the beam is the model's default; --beam 1 turns it off)"));
  if (so.policy.kind == PolicyKind::LocalAgreement && so.paradigm != Paradigm::Offline &&
      (s.temperature > 0 || so.beam > 1))
    return invalid_argument(
        std::string(
            "the local-agreement policy compares greedy continuations: no --temperature, and --beam 1") +
        (so.beam > 1 && s.beam <= 0 ? " (the beam " + std::to_string(so.beam) + " is the model's default)"
                                    : ""));
  return so;
}

}  // namespace gpstream::stream
