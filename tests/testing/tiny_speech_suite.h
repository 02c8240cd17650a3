// A gtest suite whose tests share one tiny random speech model (tiny_speech_model.h), written and loaded once
// per suite, and the session options the speech tests run it with (at most 40 target tokens: short
// transcripts of a random model).
#pragma once

#include <gtest/gtest.h>

#include "speech/speech_model.h"
#include "temp_dir.h"
#include "tiny_speech_model.h"

namespace gpstream::testing {

class TinySpeechSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ASSERT_TRUE(write_tiny_speech_model(dir_->path()).ok());
    auto m = speech::SpeechModel::load(dir_->path(), 1);
    ASSERT_TRUE(m.ok()) << m.error().message();
    model_ = new speech::SpeechModel(std::move(*m));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
    model_ = nullptr;
    dir_ = nullptr;
  }
  static stream::SessionOptions options() {
    stream::SessionOptions o = model_->llm.default_options();
    o.max_target_tokens = 40;
    return o;
  }

  static inline TempDir* dir_ = nullptr;
  static inline speech::SpeechModel* model_ = nullptr;
};

}  // namespace gpstream::testing
