// Loading speech model directories: what is refused.
#include "speech/speech_model.h"

#include <gtest/gtest.h>

#include "../testing/temp_dir.h"

namespace gpstream::speech {
namespace {

TEST(SpeechModel, DirectoryWithoutEncoderIsNotASpeechModel) {
  const testing::TempDir dir;
  EXPECT_FALSE(is_speech_model_dir(dir.path()));
  auto m = SpeechModel::load(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find(kSpeechEncoderFile), std::string::npos) << m.error().message();
}

}  // namespace
}  // namespace gpstream::speech
