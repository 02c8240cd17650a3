// HF directory ↔ GGUF conversion of a directory's gpstream.json: the caller's check sees the file's text
// and path before anything is written, an error from it refuses the conversion (no GGUF file), and the text
// is stored verbatim under kGpstreamJsonGgufKey and written back by the other direction.
#include "model/model_convert.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../testing/temp_dir.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "tiny_models.h"

namespace gpstream::model {
namespace {

using gpstream::testing::TempDir;

// A Hugging Face directory (config.json, model.safetensors, no tokenizer) with `gpstream_json` beside it.
void write_hf_dir(const std::string& dir, const std::string& gpstream_json) {
  const ModelConfig c = gpstream::testing::tiny_config(/*qwen2=*/true, /*tied=*/false, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(3));
  std::vector<io::TensorToWrite> out;
  for (const auto& [name, data] : t.tensors) out.push_back({name, data});
  ASSERT_TRUE(io::write_safetensors(dir + "/model.safetensors", out).ok());
  gpstream::testing::write_bytes(dir + "/config.json", config_to_hf_json(c));
  gpstream::testing::write_bytes(dir + "/gpstream.json", gpstream_json);
}

TEST(ModelConvert, GpstreamJsonIsCheckedStoredVerbatimAndWrittenBack) {
  TempDir tmp;
  const std::string hf = tmp.file("hf");
  std::filesystem::create_directories(hf);
  const std::string text = "{\"k\": 3,  \"source_lang\": \"en\"}\n";  // spacing kept as written
  write_hf_dir(hf, text);
  std::string seen_text, seen_path;
  HfToGgufOptions options{.name = "tiny",
                          .check_gpstream_json = [&](const std::string& t, const std::string& p) {
                            seen_text = t;
                            seen_path = p;
                            return Status{};
                          }};
  auto to_gguf = convert_hf_to_gguf(hf, tmp.file("m.gguf"), io::DType::F32, options);
  ASSERT_TRUE(to_gguf.ok()) << to_gguf.error().message();
  EXPECT_FALSE(to_gguf->tokenizer);
  EXPECT_EQ(seen_text, text);
  EXPECT_EQ(seen_path, (std::filesystem::path(hf) / "gpstream.json").string());

  auto g = io::read_gguf(tmp.file("m.gguf"));
  ASSERT_TRUE(g.ok()) << g.error().message();
  const io::GgufValue* v = g->metadata.find(kGpstreamJsonGgufKey);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->type, io::GgufType::String);
  EXPECT_EQ(v->str, text);

  auto to_hf = convert_gguf_to_hf(tmp.file("m.gguf"), tmp.file("back"), io::DType::F32);
  ASSERT_TRUE(to_hf.ok()) << to_hf.error().message();
  EXPECT_EQ(to_hf->tensors, to_gguf->tensors);
  EXPECT_EQ(gpstream::testing::read_bytes(tmp.file("back") + "/gpstream.json"), text);
}

TEST(ModelConvert, AGpstreamJsonTheCheckRefusesStopsTheConversion) {
  TempDir tmp;
  const std::string hf = tmp.file("hf");
  std::filesystem::create_directories(hf);
  write_hf_dir(hf, "{\"k_mx\": 3}");
  HfToGgufOptions options;
  options.check_gpstream_json = [](const std::string&, const std::string& p) -> Status {
    return format_error(p + ": unknown key 'k_mx'");
  };
  auto r = convert_hf_to_gguf(hf, tmp.file("m.gguf"), io::DType::F16, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            (std::filesystem::path(hf) / "gpstream.json").string() + ": unknown key 'k_mx'");
  EXPECT_FALSE(std::filesystem::exists(tmp.file("m.gguf")));
}

}  // namespace
}  // namespace gpstream::model
