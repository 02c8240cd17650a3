// Loading speech model directories: what is refused.
#include "speech/speech_model.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpstream::speech {
namespace {

TEST(SpeechModel, DirectoryWithoutEncoderIsNotASpeechModel) {
  const auto dir = std::filesystem::temp_directory_path() / "gpstream_speech_model_empty";
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(is_speech_model_dir(dir.string()));
  auto m = SpeechModel::load(dir.string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find(kSpeechEncoderFile), std::string::npos) << m.error().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpstream::speech
