// Transformer::load on model directories written into a temp dir: a good directory loads and computes
// what the in-memory model computes; a missing tensor, a wrong shape, a missing bias or config file
// is one error naming the tensor (or file) and the directory.
#include <gtest/gtest.h>

#include <filesystem>

#include "../testing/temp_dir.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "model/gguf_model.h"
#include "model/tensor_names.h"
#include "tiny_models.h"

namespace gpstream::model {
namespace {

using gpstream::testing::TempDir;

void expect_mentions(const Error& e, const std::string& what) {
  EXPECT_NE(e.message().find(what), std::string::npos) << "message lacks '" << what << "': " << e.message();
}

// Writes config.json + model.safetensors; `edit` may drop or replace tensors first.
void write_model(const std::string& dir, const ModelConfig& c, const io::TensorMap& tensors,
                 const std::map<std::string, io::TensorData>& replace = {}, const std::string& drop = "") {
  std::vector<io::TensorToWrite> out;
  for (const auto& [name, t] : tensors.tensors) {
    if (name == drop) continue;
    auto it = replace.find(name);
    out.push_back({name, it == replace.end() ? t : it->second});
  }
  ASSERT_TRUE(io::write_safetensors(dir + "/model.safetensors", out).ok());
  const std::string json = config_to_hf_json(c);
  gpstream::testing::write_bytes(dir + "/config.json", json);
}

Error load_error(const std::string& dir) {
  auto r = Transformer::load(dir, 1);
  EXPECT_FALSE(r.ok()) << "the model loaded";
  if (r.ok()) return Error(ErrorCode::Internal, "<loaded>");
  expect_mentions(r.error(), dir);
  return r.error();
}

TEST(TransformerLoad, GoodDirectoryLoadsAndMatchesTheInMemoryModel) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(/*qwen2=*/true, /*tied=*/false, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(7, io::DType::BF16));
  write_model(dir.path(), c, t);
  auto loaded = Transformer::load(dir.path(), 1);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  auto memory = gpstream::testing::tiny_transformer(c, t);
  Batch b;
  for (int i = 0; i < 5; ++i)
    b.add({.id = 3 * i + 1,
           .pos = static_cast<float>(i),
           .group = Group::Source,
           .n_src = i + 1,
           .logits = i == 4});
  std::vector<float> la, lb;
  KvCache ca(c), cb(c);
  ASSERT_TRUE((*loaded)->forward(b, ca, la).ok());
  ASSERT_TRUE(memory->forward(b, cb, lb).ok());
  EXPECT_EQ(la, lb);
}

TEST(TransformerLoad, MissingTensorIsNamed) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(false, true, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  const std::string name = hf_name(TensorId::FfnUp, 1);
  write_model(dir.path(), c, t, {}, name);
  Error e = load_error(dir.path());
  EXPECT_EQ(e.code(), ErrorCode::NotFound);
  expect_mentions(e, "missing tensor " + name);
}

TEST(TransformerLoad, UntiedModelWithoutLmHead) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(false, /*tied=*/false, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  write_model(dir.path(), c, t, {}, "lm_head.weight");
  expect_mentions(load_error(dir.path()), "lm_head.weight");
}

TEST(TransformerLoad, Qwen2WithoutItsBias) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(true, true, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  write_model(dir.path(), c, t, {}, hf_name(TensorId::AttnKBias, 0));
  expect_mentions(load_error(dir.path()), hf_name(TensorId::AttnKBias, 0));
}

TEST(TransformerLoad, WrongShapeIsNamedWithBothShapes) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(false, true, false);  // n_embd 32, q rows 4·8 = 32
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  // k_proj stored [n_embd, n_head_kv·head_dim] = [32, 16] (transposed) instead of [16, 32].
  const std::string name = hf_name(TensorId::AttnK, 0);
  io::TensorData wrong = *t.find(name);
  wrong.shape = {32, 16};
  write_model(dir.path(), c, t, {{name, wrong}});
  Error e = load_error(dir.path());
  expect_mentions(e, "tensor " + name);
  expect_mentions(e, "[32, 16]");
  expect_mentions(e, "expected [16, 32]");
}

TEST(TransformerLoad, NormWeightOfTheWrongLength) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(false, true, false);
  io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  const std::string name = hf_name(TensorId::OutputNorm);
  io::TensorMap extra;
  extra.add_f32(name, {31}, std::vector<float>(31, 1.0f));
  write_model(dir.path(), c, t, {{name, *extra.find(name)}});
  expect_mentions(load_error(dir.path()), "tensor " + name + " has shape [31]");
}

TEST(TransformerLoad, ConfigDisagreeingWithTheWeights) {
  TempDir dir;
  ModelConfig c = gpstream::testing::tiny_config(false, true, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  c.n_layer = 3;  // the file has two layers
  write_model(dir.path(), c, t);
  expect_mentions(load_error(dir.path()), "model.layers.2.");
}

// A layer count far beyond the tensors present sized the per-layer table before the first missing tensor was
// noticed: 10^7 layers allocated 4.6 GB (even under GPSTREAM_MEMORY_LIMIT), 10^8 threw a bare std::bad_alloc.
TEST(TransformerLoad, LayerCountBeyondTheTensorsIsRefusedBeforeAllocating) {
  TempDir dir;
  ModelConfig c = gpstream::testing::tiny_config(false, true, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  c.n_layer = 100'000'000;
  write_model(dir.path(), c, t);
  Error e = load_error(dir.path());
  expect_mentions(e, dir.file("config.json") + ": num_hidden_layers");
  expect_mentions(e, "100000000");
}

// The same through a GGUF file's block_count.
TEST(TransformerLoad, GgufBlockCountBeyondTheTensorsIsRefusedBeforeAllocating) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(true, false, false);
  const io::TensorMap t = random_tensors(c, gpstream::testing::tiny_init(1));
  auto meta = gguf_metadata_for(c, "x", 0);
  ASSERT_TRUE(meta.ok()) << meta.error().message();
  io::TensorMap permuted;
  auto tensors = gguf_tensors_from_hf(c, t, permuted);
  ASSERT_TRUE(tensors.ok()) << tensors.error().message();
  meta->set("qwen2.block_count", io::GgufValue::u32(100'000'000));
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(io::write_gguf(path, *meta, *tensors).ok());
  Error e = load_error(path);
  expect_mentions(e, path + ": metadata key qwen2.block_count");
  expect_mentions(e, "100000000");
}

TEST(TransformerLoad, MissingConfigJson) {
  TempDir dir;
  const ModelConfig c = gpstream::testing::tiny_config(false, true, false);
  write_model(dir.path(), c, random_tensors(c, gpstream::testing::tiny_init(1)));
  std::filesystem::remove(dir.file("config.json"));
  expect_mentions(load_error(dir.path()), "config.json");
}

TEST(TransformerLoad, MissingDirectory) {
  TempDir dir;
  expect_mentions(load_error(dir.file("nowhere")), "config.json");
}

}  // namespace
}  // namespace gpstream::model
