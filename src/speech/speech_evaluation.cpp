// Running a SpeechTranscriber over a speech manifest into SimulEval records.
#include "speech/speech_evaluation.h"

#include <algorithm>

namespace gpstream::speech {

Result<eval::InstanceRecord> transcribe_to_record(SpeechTranscriber& transcriber,
                                                  const std::vector<float>& samples,
                                                  const speech::SpeechUtterance& utterance, int64_t index,
                                                  size_t piece_samples) {
  const size_t piece = std::max<size_t>(1, piece_samples);
  GPS_TRY(transcriber.reset());
  std::vector<TranscribedWord> words;
  for (size_t i = 0; i < samples.size(); i += piece)
    GPS_TRY(transcriber.push(samples.data() + i, std::min(piece, samples.size() - i), words));
  GPS_TRY(transcriber.finish(words));
  eval::TextOutputRecorder recorder;
  for (const auto& w : words) recorder.receive(w.text, w.delay_ms, w.elapsed_ms);
  eval::InstanceRecord r = recorder.finish(index, utterance.transcript, utterance.wav, transcriber.audio_ms(),
                                           /*delays_int=*/false, /*elapsed_int=*/false);
  r.source_is_list = true;  // SimulEval's speech logs list the source file
  return r;
}

Result<SpeechEvalResult> evaluate_speech(SpeechModel& model, const stream::SessionOptions& session_options,
                                         const std::vector<speech::SpeechUtterance>& utterances,
                                         const SpeechEvalOptions& options,
                                         const std::function<void(size_t, size_t)>& progress) {
  GPS_ASSIGN(auto transcriber, SpeechTranscriber::create(model, session_options));
  SpeechEvalResult out;
  out.records.reserve(utterances.size());
  for (size_t i = 0; i < utterances.size(); ++i) {
    const auto& u = utterances[i];
    auto loaded = speech::load_speech_utterance(u, options.epoch, options.load);
    if (!loaded.ok()) return loaded.error();
    auto rec = transcribe_to_record(*transcriber, loaded->samples, u, static_cast<int64_t>(i),
                                    options.piece_samples);
    if (!rec.ok()) return rec.error().with_context(u.wav + " (manifest line " + std::to_string(u.line) + ")");
    out.audio_seconds += transcriber->audio_ms() / 1000.0;
    out.compute_seconds += transcriber->compute_ms() / 1000.0;
    out.records.push_back(std::move(rec).value());
    if (progress) progress(i + 1, utterances.size());
  }
  return out;
}

}  // namespace gpstream::speech
