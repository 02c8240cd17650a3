// The shipped speech model (models/gpstream-speech-en, docs/speech.md "Results") end to end on three
// utterances of dev voices it never heard in training (the first three of the dev plan,
// tests/speech/data/shipped-dev): it loads, streams them at its default chunk wait-k, and its corpus WER
// against the manifest's transcripts (2.4 % at the default k = 7 and at k = 10 for the shipped weights,
// with the word beam as token by token)
// stays at most 50 %, far below that of a broken
// encoder, projector or LLM (unrelated or no words: ~100 %).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/wer.h"
#include "speech/speech_evaluation.h"
#include "speech/speech_manifest.h"
#include "speech/speech_model.h"

namespace gpstream::speech {
namespace {

const std::string kShippedSpeechModel = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-speech-en";

TEST(ShippedSpeechModel, TranscribesUnseenVoices) {
  auto model = SpeechModel::load(kShippedSpeechModel, 1);
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto manifest = speech::read_speech_manifest(std::string(GPSTREAM_SOURCE_DIR) +
                                               "/tests/speech/data/shipped-dev/manifest.tsv");
  ASSERT_TRUE(manifest.ok()) << manifest.error().message();
  ASSERT_EQ(manifest->utterances.size(), 3u);
  SpeechEvalOptions options;  // the audio as given, as `gpstream eval --speech` reads it by default
  auto result = evaluate_speech(*model, model->llm.default_options(), manifest->utterances, options);
  ASSERT_TRUE(result.ok()) << result.error().message();
  std::vector<std::string> refs, hyps;
  for (const eval::InstanceRecord& r : result->records) {
    refs.push_back(*r.reference);
    hyps.push_back(r.prediction);
  }
  auto wer = eval::corpus_wer(refs, hyps);
  ASSERT_TRUE(wer.ok()) << wer.error().message();
  EXPECT_LE(wer->wer, 0.5) << "hypotheses:\n" << hyps[0] << "\n" << hyps[1] << "\n" << hyps[2];
}

}  // namespace
}  // namespace gpstream::speech
