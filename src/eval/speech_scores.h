// Scoring a speech-input instances.log (audio in, text out), as `gpstream score --speech` does: the
// corpus WER of the predictions against the references (wer.h), then SimulEval's speech-input
// latency (latency.h with SourceType::Speech: delays and |X| in ms of audio, metrics.md A.1–A.3)
// and, by default, each metric's computation-aware `_CA` variant over `elapsed`. The log is SimulEval's
// speech-to-text instances.log; it is untrusted, so every record is checked first
// (validate_speech_instance) and a defect is an error naming the instance.
#pragma once

#include <string>
#include <vector>

#include "eval/instance_log.h"
#include "eval/latency.h"
#include "eval/scores.h"
#include "eval/wer.h"

namespace gpstream::eval {

// Longest source accepted: 24 h of audio (86 400 000 ms).
constexpr double kMaxSpeechSourceMs = 24.0 * 3600.0 * 1000.0;
// Slack for times written by another program (float sums of segment durations): a delay may exceed
// |X|, and an elapsed time fall short of its delay, by this many ms.
constexpr double kSpeechTimeSlackMs = 1e-6;

// A record SimulEval's speech evaluator could have written: a reference; 0 < |X| ≤ 24 h; one delay
// per latency unit of the prediction (words, or non-space characters with LatencyUnit::Char);
// delays non-decreasing within [0, |X|]; with need_elapsed, one elapsed time per delay, each at or
// after its delay, non-decreasing.
Status validate_speech_instance(const InstanceRecord& record, LatencyUnit unit, bool need_elapsed);

struct SpeechScoreOptions {
  WerNormalization normalization = WerNormalization::Basic;
  std::vector<std::string> metrics = default_latency_metrics();
  bool use_ref_len = true;  // AL/AP target length = reference length (SimulEval's default)
  LatencyUnit unit = LatencyUnit::Word;
  bool computation_aware = true;  // adds <M>_CA from elapsed
};

struct SpeechScoreResult {
  NamedScores scores;  // WER (percent), then the latency metrics in SimulEval's order (M, M_CA, ...)
  WerCounts wer;       // corpus counts behind WER
  // Instances without delays (empty hypotheses): not in the latency means. When no instance has any
  // output, latency is undefined: only WER is returned, with a warning.
  std::vector<int64_t> skipped;
  std::vector<std::string> warnings;
};

Result<SpeechScoreResult> score_speech_instances(const std::vector<InstanceRecord>& instances,
                                                 const SpeechScoreOptions& options);

}  // namespace gpstream::eval
