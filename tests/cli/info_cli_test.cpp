// `gpstream info MODEL`: on the shipped models, a tiny model made here and its GGUF conversion, every value
// is checked against the model's files read here independently: config.json (architecture, sizes, the
// parameter count by the Llama formula), the safetensors headers (stored dtypes, the speech encoder's size),
// tokenizer.json (its size) and gpstream.json (streaming settings and the "trained" record).
// Skipped when the gpstream binary is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace gpstream {
namespace {

using nlohmann::json;

const std::string kDir = std::string(GPSTREAM_BINARY_DIR) + "/info_cli_test_tmp/" + std::to_string(getpid());
const std::string kModels = std::string(GPSTREAM_SOURCE_DIR) + "/models/";

testing::CommandRun run(const std::string& args) {
  return testing::run_gpstream(kDir, args);
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A safetensors file's header: 8 bytes of little-endian length, then that much JSON.
json safetensors_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | len[i];
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  json h = json::parse(text);
  h.erase("__metadata__");
  return h;
}

// Parameters of a Llama-style model from its config.json: embeddings (and an untied output), per layer q, k,
// v, o projections, the SwiGLU's three matrices and two norms, then the final norm.
int64_t llama_parameters(const json& c) {
  const int64_t h = c["hidden_size"], ff = c["intermediate_size"], v = c["vocab_size"],
                heads = c["num_attention_heads"];
  const int64_t kv = c["num_key_value_heads"], layers = c["num_hidden_layers"];
  const int64_t head_dim = c.contains("head_dim") ? c["head_dim"].get<int64_t>() : h / heads;
  const bool tied = c.value("tie_word_embeddings", false);
  const int64_t attention = h * heads * head_dim * 2 + h * kv * head_dim * 2;
  return v * h * (tied ? 1 : 2) + layers * (attention + 3 * h * ff + 2 * h) + h;
}

int32_t tokenizer_size(const json& t) {
  int32_t n = 0;
  for (const auto& [_, id] : t["model"]["vocab"].items()) n = std::max(n, id.get<int32_t>() + 1);
  for (const auto& a : t["added_tokens"]) n = std::max(n, a["id"].get<int32_t>() + 1);
  return n;
}

class InfoCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kGpstreamBin)) GTEST_SKIP() << "gpstream binary not built";
    std::filesystem::create_directories(kDir);
  }

  // `info DIR --json` against DIR's files.
  static json check_directory(const std::string& dir) {
    const auto r = run("info " + dir + " --json");
    EXPECT_EQ(r.code, 0) << r.err;
    const json info = json::parse(r.out);
    const json c = read_json(dir + "/config.json");
    EXPECT_EQ(info["format"], "huggingface");
    EXPECT_EQ(info["architecture"], c["architectures"][0]);
    EXPECT_EQ(info["model_type"], c["model_type"]);
    EXPECT_EQ(info["layers"], c["num_hidden_layers"]);
    EXPECT_EQ(info["hidden_size"], c["hidden_size"]);
    EXPECT_EQ(info["intermediate_size"], c["intermediate_size"]);
    EXPECT_EQ(info["heads"], c["num_attention_heads"]);
    EXPECT_EQ(info["kv_heads"], c["num_key_value_heads"]);
    EXPECT_EQ(info["vocab_size"], c["vocab_size"]);
    EXPECT_EQ(info["parameters"].get<int64_t>(), llama_parameters(c));
    std::map<std::string, int> dtypes;
    int64_t stored = 0;
    const json header = safetensors_header(dir + "/model.safetensors");
    for (const auto& [_, t] : header.items()) {
      ++dtypes[t["dtype"].get<std::string>()];
      int64_t n = 1;
      for (const auto& d : t["shape"]) n *= d.get<int64_t>();
      stored += n;
    }
    EXPECT_EQ(info["dtypes"].get<decltype(dtypes)>(), dtypes);
    EXPECT_EQ(stored, llama_parameters(c)) << "the formula covers every stored tensor";
    EXPECT_EQ(info["tokenizer_vocab_size"], tokenizer_size(read_json(dir + "/tokenizer.json")));
    const bool has_meta = std::filesystem::exists(dir + "/gpstream.json");
    EXPECT_EQ(info["gpstream_json"], has_meta);
    if (has_meta) {
      const json m = read_json(dir + "/gpstream.json");
      for (const char* key : {"source_lang", "target_lang", "paradigm", "k", "k_min", "k_max"})
        EXPECT_EQ(info[key], m[key]) << key;
      EXPECT_EQ(info["beam"], m.value("beam", 1));
      EXPECT_EQ(info["end_after_source"], m.value("end_after_source", false));
      EXPECT_EQ(info["policy"]["name"], m.contains("policy") ? m["policy"]["name"] : json("wait-k"));
      EXPECT_EQ(std::stod(info["phi"].get<std::string>()), m["phi"].get<double>());
      EXPECT_EQ(info["template"], m["template"]);
      EXPECT_EQ(info["trained"], m["trained"]);
    }
    return info;
  }
};

TEST_F(InfoCli, TheShippedTranslationModel) {
  const json info = check_directory(kModels + "gpstream-en-fr");
  EXPECT_FALSE(info.contains("speech_encoder_parameters"));
  // The text form: one "key: value" line each, the trained record's scores among them.
  const auto r = run("info " + kModels + "gpstream-en-fr");
  ASSERT_EQ(r.code, 0) << r.err;
  const json m = read_json(kModels + "gpstream-en-fr/gpstream.json");
  EXPECT_NE(r.out.find("languages:         en to fr\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k:                 5 (range 1-9)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layers:            6\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dev_loss:        " + m["trained"]["dev_loss"].dump() + "\n"), std::string::npos)
      << r.out;
}

TEST_F(InfoCli, TheShippedSpeechModel) {
  const std::string dir = kModels + "gpstream-speech-en";
  const json info = check_directory(dir);
  int64_t encoder = 0;
  const json header = safetensors_header(dir + "/speech_encoder.safetensors");
  for (const auto& [_, t] : header.items()) {
    int64_t n = 1;
    for (const auto& d : t["shape"]) n *= d.get<int64_t>();
    encoder += n;
  }
  EXPECT_EQ(info["speech_encoder_parameters"], encoder);
  EXPECT_EQ(info["speech_encoder_parameters"],
            read_json(dir + "/gpstream.json")["trained"]["encoder_parameters"]);
}

TEST_F(InfoCli, ATinyModelWithoutGpstreamJsonAndItsGguf) {
  std::ofstream(kDir + "/corpus.txt") << "open the file\nsave the document\nclose the window\n";
  ASSERT_EQ(run("train-tokenizer corpus.txt -o tok --vocab-size 280").code, 0);
  const auto init =
      run("init-model -o tiny --tokenizer tok --layers 2 --hidden 64 --heads 4 --kv-heads 2 "
          "--intermediate 96 --dtype bf16 --untied");
  ASSERT_EQ(init.code, 0) << init.err;
  // A gpstream.json the commands could not load: convert refuses it, naming the file and the key, and
  // writes nothing.
  std::ofstream(kDir + "/tiny/gpstream.json") << "{\"k_mx\": 3}";
  const auto broken = run("convert tiny broken.gguf");
  EXPECT_EQ(broken.code, 1) << broken.err;
  EXPECT_NE(broken.err.find("gpstream convert: tiny/gpstream.json: unknown key 'k_mx'"), std::string::npos)
      << broken.err;
  EXPECT_FALSE(std::filesystem::exists(kDir + "/broken.gguf"));
  std::filesystem::remove(kDir + "/tiny/gpstream.json");
  const json info = check_directory(kDir + "/tiny");
  EXPECT_EQ(info["tied_embeddings"], false);
  EXPECT_EQ(info["trained"], json::object());
  const auto text = run("info tiny");
  EXPECT_NE(text.out.find("gpstream.json:     none"), std::string::npos) << text.out;
  // The GGUF file: the same architecture and sizes; Q8_0 matrices, the norms kept in F32.
  const auto conv = run("convert tiny tiny.gguf --type q8_0");
  ASSERT_EQ(conv.code, 0) << conv.err;
  const auto g = run("info tiny.gguf --json");
  ASSERT_EQ(g.code, 0) << g.err;
  const json gi = json::parse(g.out);
  EXPECT_EQ(gi["format"], "gguf");
  for (const char* key : {"architecture", "parameters", "layers", "hidden_size", "intermediate_size", "heads",
                          "kv_heads", "vocab_size", "tokenizer_vocab_size", "gpstream_json"})
    EXPECT_EQ(gi[key], info[key]) << key;
  const json c = read_json(kDir + "/tiny/config.json");
  const int norms = 2 * c["num_hidden_layers"].get<int>() + 1;
  int tensors = 0;
  for (const auto& [_, n] : info["dtypes"].items()) tensors += n.get<int>();
  EXPECT_EQ(gi["dtypes"]["F32"], norms);
  EXPECT_EQ(gi["dtypes"]["Q8_0"], tensors - norms);
  // A missing model: exit 1, one line.
  const auto missing = run("info no-such-model");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace gpstream
