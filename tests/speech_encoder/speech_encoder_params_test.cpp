// Speech encoder parameters: the default config's size, config validation and JSON, seeded initialisation,
// safetensors save/load round trip, and hostile files (each defect reported, nothing over-allocated).
#include "speech_encoder/speech_encoder_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../testing/temp_dir.h"
#include "io/safetensors.h"
#include "speech_encoder/speech_encoder.h"

namespace gpstream::speech_encoder {
namespace {

SpeechEncoderConfig small_config() {
  SpeechEncoderConfig c;
  c.n_mels = 10;
  c.conv_channels = 6;
  c.d_model = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_ff = 12;
  c.chunk_frames = 4;
  c.proj_hidden = 10;
  c.llm_hidden = 7;
  return c;
}

TEST(SpeechEncoderConfig, DefaultIsValidAndUnderFiveMillionParameters) {
  const SpeechEncoderConfig c;
  EXPECT_TRUE(c.validate().ok());
  EXPECT_LE(c.parameter_count(), 5'000'000);
  // Hand count: conv 80*3*256+256 + 256*3*256+256 = 258560; per layer 2*256 + 4*256^2 + 3*256*768 = 852480;
  // final norm 256; projector 512*1024+1024 + 1024*256+256 = 787712.
  EXPECT_EQ(c.parameter_count(), 258560 + 4 * 852480 + 256 + 787712);
  SpeechEncoderModel m(c);
  EXPECT_EQ(static_cast<int64_t>(m.size()), c.parameter_count());
}

TEST(SpeechEncoderConfig, RejectsInconsistentSizes) {
  auto c = small_config();
  c.n_head = 3;  // 8 % 3 != 0
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.n_head = 8;  // head_dim 1 (odd: no RoPE pairs)
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.chunk_frames = 5;  // not a multiple of stack 2
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.conv_kernel = 1;
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.d_model = 0;
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.norm_eps = 0.0f;
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.mel_scale = 0.0f;
  EXPECT_FALSE(c.validate().ok());
  c = small_config();
  c.mel_shift = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(c.validate().ok());
}

TEST(SpeechEncoderConfig, JsonRoundTripAndHostileJson) {
  auto c = small_config();
  c.left_chunks = 3;
  c.rope_theta = 500.0f;
  c.mel_shift = -2.5f;
  auto back = SpeechEncoderConfig::from_json(c.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->to_json(), c.to_json());
  EXPECT_EQ(back->left_chunks, 3);
  EXPECT_FALSE(SpeechEncoderConfig::from_json("").ok());
  EXPECT_FALSE(SpeechEncoderConfig::from_json("[1, 2]").ok());
  EXPECT_FALSE(SpeechEncoderConfig::from_json("{\"n_mels\": 80").ok());
  std::string j = c.to_json();
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = j;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_FALSE(SpeechEncoderConfig::from_json(replaced("\"d_model\":8", "\"d_model\":\"8\"")).ok());
  EXPECT_FALSE(SpeechEncoderConfig::from_json(replaced("\"d_model\":8", "\"d_model\":8.5")).ok());
  EXPECT_FALSE(SpeechEncoderConfig::from_json(replaced("\"d_model\":8", "\"d_model\":-8")).ok());
  EXPECT_FALSE(
      SpeechEncoderConfig::from_json(replaced("\"d_model\":8", "\"d_model\":18446744073709551615")).ok());
  EXPECT_FALSE(SpeechEncoderConfig::from_json(replaced("\"d_model\":8,", "")).ok());  // missing
  EXPECT_FALSE(SpeechEncoderConfig::from_json(replaced("\"rope_theta\":500.0", "\"rope_theta\":1e300")).ok());
  // Errors name the field, its bounds (d_model in [2, 8192]) and the value; keys gpstream does not write are
  // refused (the config is gpstream's own).
  auto message = [](const std::string& text) {
    auto r = SpeechEncoderConfig::from_json(text, "enc.safetensors");
    return r.ok() ? std::string("<accepted>") : r.error().message();
  };
  EXPECT_EQ(message(replaced("\"d_model\":8", "\"d_model\":-8")),
            "enc.safetensors: field 'd_model' must be an integer in [2, 8192], got -8");
  EXPECT_EQ(message(replaced("\"d_model\":8", "\"d_model\":8.5")),
            "enc.safetensors: field 'd_model' must be an integer, got number");
  EXPECT_EQ(message(replaced("\"d_model\":8,", "")), "enc.safetensors: missing field 'd_model'");
  EXPECT_EQ(message(replaced("\"d_model\":8", "\"d_model\":8,\"d_modle\":8"))
                .rfind("enc.safetensors: unknown key 'd_modle'", 0),
            0u);
}

// The convolution module: its count by hand, its tensors, its JSON key (absent when 0, so encoders saved
// before the module existed keep their JSON) and its bounds.
TEST(SpeechEncoderConfig, ConvolutionModule) {
  SpeechEncoderConfig c;
  c.conv_module_kernel = 15;
  c.proj_hidden = 256;
  ASSERT_TRUE(c.validate().ok());
  // Per layer 852480 + conv_norm 256 + pw1 2*256*256 + dw 256*15 + pw2 256*256 = 1053184;
  // projector 512*256+256 + 256*256+256 = 197120.
  EXPECT_EQ(c.parameter_count(), 258560 + 4 * 1053184 + 256 + 197120);
  EXPECT_LE(c.parameter_count(), 5'000'000);
  SpeechEncoderModel m(c);
  EXPECT_EQ(static_cast<int64_t>(m.size()), c.parameter_count());
  const auto* dw = m.find("encoder.layers.3.conv.dw.weight");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->shape, (std::vector<int64_t>{256, 15}));
  ASSERT_NE(m.find("encoder.layers.0.conv.pw1.weight"), nullptr);
  EXPECT_EQ(m.find("encoder.layers.0.conv.pw1.weight")->shape, (std::vector<int64_t>{512, 256}));
  EXPECT_NE(m.find("encoder.layers.0.conv_norm.weight"), nullptr);
  EXPECT_NE(m.find("encoder.layers.0.conv.pw2.weight"), nullptr);
  EXPECT_EQ(SpeechEncoderModel(SpeechEncoderConfig{}).find("encoder.layers.0.conv.dw.weight"), nullptr);

  EXPECT_EQ(SpeechEncoderConfig{}.to_json().find("conv_module_kernel"), std::string::npos);
  auto without = SpeechEncoderConfig::from_json(SpeechEncoderConfig{}.to_json());
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->conv_module_kernel, 0);
  auto back = SpeechEncoderConfig::from_json(c.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->conv_module_kernel, 15);
  c.conv_module_kernel = 64;
  EXPECT_FALSE(c.validate().ok());
  c.conv_module_kernel = -1;
  EXPECT_FALSE(c.validate().ok());
}

TEST(SpeechEncoderModel, SeededInitIsDeterministicAndScaled) {
  SpeechEncoderModel a(small_config()), b(small_config()), other(small_config());
  a.init_random(42);
  b.init_random(42);
  other.init_random(43);
  EXPECT_EQ(a.values(), b.values());
  EXPECT_NE(a.values(), other.values());
  const auto* conv1 = a.find("encoder.conv1.weight");
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(conv1->shape, (std::vector<int64_t>{6, 3, 10}));
  const float bound = 1.0f / std::sqrt(30.0f);
  float max_abs = 0.0f;
  for (size_t i = 0; i < conv1->numel; ++i)
    max_abs = std::max(max_abs, std::fabs(a.values()[conv1->offset + i]));
  EXPECT_LE(max_abs, bound);
  EXPECT_GT(max_abs, 0.8f * bound);
  const auto* norm = a.find("encoder.layers.1.ffn_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(a.values()[norm->offset], 1.0f);
  EXPECT_EQ(a.values()[a.find("projector.fc2.bias")->offset], 0.0f);
}

TEST(SpeechEncoderModel, SaveLoadRoundTrip) {
  testing::TempDir dir;
  auto c = small_config();
  c.left_chunks = 2;
  SpeechEncoderModel m(c);
  m.init_random(9);
  ASSERT_TRUE(m.save(dir.file("enc.safetensors")).ok());
  auto back = SpeechEncoderModel::load(dir.file("enc.safetensors"));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->config().to_json(), c.to_json());
  EXPECT_EQ(back->values(), m.values());
  // The documented names, read back independently of the loader.
  io::TensorMap map;
  ASSERT_TRUE(io::read_safetensors(dir.file("enc.safetensors"), map).ok());
  ASSERT_NE(map.find("encoder.layers.1.attn.o.weight"), nullptr);
  EXPECT_EQ(map.find("projector.fc1.weight")->shape, (std::vector<int64_t>{10, 16}));
  EXPECT_EQ(map.find("encoder.conv2.weight")->shape, (std::vector<int64_t>{8, 3, 6}));
  EXPECT_EQ(map.tensors.size(), 4u + 2u * 9u + 1u + 4u);
}

TEST(SpeechEncoderModel, SavesMatricesInBf16AndTheRestInF32) {
  testing::TempDir dir;
  SpeechEncoderModel m(small_config());
  m.init_random(3);
  std::vector<float> v = m.values();
  for (size_t i = 0; i < v.size(); ++i) v[i] += 0.01f * static_cast<float>(i % 13);  // norms and biases too
  m.values() = v;
  ASSERT_TRUE(m.save(dir.file("enc.safetensors"), SpeechEncoderModel::Storage::MatricesBf16).ok());
  io::TensorMap map;
  ASSERT_TRUE(io::read_safetensors(dir.file("enc.safetensors"), map).ok());
  auto back = SpeechEncoderModel::load(dir.file("enc.safetensors"));
  ASSERT_TRUE(back.ok()) << back.error().message();
  size_t matrices = 0;
  for (const auto& t : m.tensors()) {
    ASSERT_NE(map.find(t.name), nullptr) << t.name;
    EXPECT_EQ(map.find(t.name)->dtype, t.is_matrix ? io::DType::BF16 : io::DType::F32) << t.name;
    matrices += t.is_matrix;
    for (size_t i = t.offset; i < t.offset + t.numel; ++i) {
      if (t.is_matrix)  // BF16 keeps 8 significant bits: half an ulp is at most 2^-8 relative
        ASSERT_LE(std::abs(back->values()[i] - v[i]), 0x1.0p-8f * std::abs(v[i])) << t.name;
      else
        ASSERT_EQ(back->values()[i], v[i]) << t.name;
    }
  }
  EXPECT_GT(matrices, 0u);
  EXPECT_LT(matrices, m.tensors().size());
}

// Writes the tensors of `m`, with `edit` applied to the list first.
template <typename Edit>
std::string write_edited(const testing::TempDir& dir, const SpeechEncoderModel& m, Edit edit,
                         std::map<std::string, std::string> meta) {
  std::vector<io::TensorToWrite> tensors;
  for (const auto& t : m.tensors()) {
    io::TensorData d;
    d.shape = t.shape;
    d.bytes =
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(m.data() + t.offset), t.numel * 4);
    tensors.push_back({t.name, d});
  }
  edit(tensors);
  const std::string path = dir.file("bad.safetensors");
  EXPECT_TRUE(io::write_safetensors(path, tensors, meta).ok());
  return path;
}

void expect_load_error(const std::string& path, const std::string& needle) {
  auto r = SpeechEncoderModel::load(path);
  ASSERT_FALSE(r.ok()) << needle;
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(SpeechEncoderModel, HostileFilesAreRejected) {
  testing::TempDir dir;
  const auto c = small_config();
  SpeechEncoderModel m(c);
  m.init_random(1);
  const std::map<std::string, std::string> meta = {{kSpeechEncoderMetadataKey, c.to_json()}};
  auto none = [](std::vector<io::TensorToWrite>&) {};
  expect_load_error(dir.file("missing.safetensors"), "missing.safetensors");
  expect_load_error(write_edited(dir, m, none, {}), "metadata");
  expect_load_error(write_edited(dir, m, none, {{kSpeechEncoderMetadataKey, "{"}}),
                    "bad.safetensors: speech encoder config: invalid JSON");
  expect_load_error(write_edited(
                        dir, m, [](auto& t) { t.erase(t.begin() + 5); }, meta),
                    "parameters");
  // Same element count, wrong shape.
  expect_load_error(write_edited(
                        dir, m,
                        [](auto& t) {
                          t[0].data.shape = {3, 6, 10};
                        },
                        meta),
                    "shape");
  // A renamed tensor: the expected one is missing.
  expect_load_error(write_edited(
                        dir, m, [](auto& t) { t[1].name = "encoder.conv1.b"; }, meta),
                    "missing tensor");
  // A config asking for far more parameters than the file holds fails before allocating them.
  SpeechEncoderConfig huge;
  huge.d_model = 8192;
  huge.n_head = 64;
  huge.n_ff = 65536;
  huge.n_layer = 128;
  expect_load_error(write_edited(dir, m, none, {{kSpeechEncoderMetadataKey, huge.to_json()}}), "parameters");
  // Non-finite weights.
  std::vector<float> nan_bias(6, 0.0f);
  nan_bias[2] = std::numeric_limits<float>::quiet_NaN();
  expect_load_error(write_edited(
                        dir, m,
                        [&](auto& t) {
                          t[1].data.bytes = std::span<const std::byte>(
                              reinterpret_cast<const std::byte*>(nan_bias.data()), nan_bias.size() * 4);
                        },
                        meta),
                    "non-finite");
}

}  // namespace
}  // namespace gpstream::speech_encoder
