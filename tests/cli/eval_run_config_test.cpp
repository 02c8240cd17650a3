// `eval --output DIR` and `eval --speech --output DIR` write DIR/config.yaml: SimulEval's source_type and
// target_type, and a gpstream: map whose weight hashes are `sha256sum`'s of the model's files, whose options
// are the command line's (given and default values), and whose strings survive colons and quotes. Also
// yaml_quoted's escapes against hand-written YAML. Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../testing/tiny_speech_model.h"
#include "cli_run.h"
#include "eval/run_config.h"

namespace gpstream {
namespace {

const std::string kDir =
    std::string(GPSTREAM_BINARY_DIR) + "/eval_run_config_test_tmp/" + std::to_string(getpid());

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::sha256sum_of;

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

class EvalRunConfig : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(testing::kGpstreamBin)) return;
    std::filesystem::create_directories(kDir);
    ASSERT_TRUE(testing::write_tiny_speech_model(kDir + "/model").ok());
    std::ofstream(kDir + "/pa:irs \"x\".tsv")
        << "The cat sleeps.\tLe chat dort.\nOpen the door.\tOuvre la porte.\n";
  }
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
  }
};

TEST_F(EvalRunConfig, TextEvalWritesConfigYaml) {
  auto r = run("eval -m model --tsv 'pa:irs \"x\".tsv' -k 1 -k 3 --pace 2.5 --json -t 1 --output out");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string y = read_text(kDir + "/out/config.yaml");
  ASSERT_FALSE(y.empty());
  EXPECT_EQ(y.rfind("source_type: text\ntarget_type: text\ngpstream:\n", 0), 0u) << y;
  EXPECT_TRUE(has_line(y, "  version: \"0.1.0\"")) << y;
  EXPECT_TRUE(has_line(y, "  command: \"eval\"")) << y;
  EXPECT_TRUE(has_line(y, "  model: \"" + kDir + "/model\"")) << y;
  for (const char* f : {"model.safetensors", "speech_encoder.safetensors", "config.json", "tokenizer.json",
                        "gpstream.json"}) {
    const std::string hex = sha256sum_of(kDir + "/model/" + f);
    ASSERT_EQ(hex.size(), 64u) << f;
    EXPECT_TRUE(has_line(y, std::string("    \"") + f + "\": \"" + hex + "\"")) << f << "\n" << y;
  }
  // Given options as given, the others at their defaults; the file name's colon and quotes escaped.
  EXPECT_TRUE(has_line(y, "    tsv: \"pa:irs \\\"x\\\".tsv\"")) << y;
  EXPECT_TRUE(has_line(y, "    model: \"model\"")) << y;
  EXPECT_TRUE(has_line(y, "    wait-k:\n      - 1\n      - 3")) << y;
  EXPECT_TRUE(has_line(y, "    pace: 2.5")) << y;
  EXPECT_TRUE(has_line(y, "    json: true")) << y;
  EXPECT_TRUE(has_line(y, "    threads: 1")) << y;
  EXPECT_TRUE(has_line(y, "    paradigm:\n      - \"group\"")) << y;  // not given: the model's, filled in
  EXPECT_TRUE(has_line(y, "    max-tokens: 256")) << y;
  EXPECT_TRUE(has_line(y, "    limit: 0")) << y;
  EXPECT_TRUE(has_line(y, "    speech: false")) << y;
  EXPECT_TRUE(has_line(y, "    phi: \"\"")) << y;
  EXPECT_EQ(y.find("help"), std::string::npos) << y;
  EXPECT_NE(y.find("\n  cpu: \""), std::string::npos) << y;
  EXPECT_TRUE(has_line(y, "  kernels_isa: \"avx2\"") || has_line(y, "  kernels_isa: \"avx512\"")) << y;
  // The scores are still there beside it.
  EXPECT_TRUE(std::filesystem::exists(kDir + "/out/group-k3/scores.tsv"));
  // Without --output no folder is made.
  auto none = run("eval -m model --tsv 'pa:irs \"x\".tsv' -k 1 --json -t 1");
  ASSERT_EQ(none.code, 0) << none.err;
}

TEST_F(EvalRunConfig, SpeechEvalWritesConfigYaml) {
  const std::string manifest =
      std::string(GPSTREAM_SOURCE_DIR) + "/tests/audio/data/speech/train/manifest.tsv";
  auto r = run("eval --speech -m model --manifest " + manifest +
               " --limit 1 -k 2 --wer-normalization none --json -t 1 --output sp");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string y = read_text(kDir + "/sp/config.yaml");
  EXPECT_EQ(y.rfind("source_type: speech\ntarget_type: text\ngpstream:\n", 0), 0u) << y;
  EXPECT_TRUE(has_line(y, "  command: \"eval --speech\"")) << y;
  const std::string hex = sha256sum_of(kDir + "/model/speech_encoder.safetensors");
  EXPECT_TRUE(has_line(y, "    \"speech_encoder.safetensors\": \"" + hex + "\"")) << y;
  EXPECT_TRUE(has_line(y, "    manifest: \"" + manifest + "\"")) << y;
  EXPECT_TRUE(has_line(y, "    wer-normalization: \"none\"")) << y;
  EXPECT_TRUE(has_line(y, "    limit: 1")) << y;
  EXPECT_TRUE(has_line(y, "    json: true")) << y;
  EXPECT_TRUE(has_line(y, "    max-tokens: 256")) << y;
  EXPECT_TRUE(has_line(y, "    wait-k:\n      - 2")) << y;
  EXPECT_TRUE(has_line(y, "    phi:\n      - \"0\"")) << y;  // not given: the model's, filled in
}

// Hand-written YAML double-quoted scalars (YAML 1.2, 7.3.1 and 5.7).
TEST(YamlQuoted, EscapesWhatMustBe) {
  EXPECT_EQ(eval::yaml_quoted("C:\\runs: \"a\" #1"), R"("C:\\runs: \"a\" #1")");
  EXPECT_EQ(eval::yaml_quoted("a\nb\tc\rd\x01\x7f"), R"("a\nb\tc\rd\x01\x7F")");
  EXPECT_EQ(eval::yaml_quoted("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");  // UTF-8 kept
  EXPECT_EQ(eval::yaml_quoted("\xc2\x85|\xe2\x80\xa8|\xef\xbb\xbf"), R"("\x85|\u2028|\uFEFF")");
  EXPECT_EQ(eval::yaml_quoted("bad\xff\xc3(\xed\xa0\x80"), R"("bad\xFF\xC3(\xED\xA0\x80")");  // not UTF-8
  EXPECT_EQ(eval::yaml_quoted(""), "\"\"");
}

}  // namespace
}  // namespace gpstream
