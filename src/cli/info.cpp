// `gpstream info MODEL [--json]`: what a model is, read from its files without loading the weights: family
// and architecture, parameter count, layers and sizes, stored dtypes, vocabulary, the speech encoder of a
// speech model, and its streaming settings (template, languages, trained paradigm, φ, k and k range, policy,
// beam, end_after_source) with the "trained" record of its gpstream.json. MODEL is a Hugging Face directory
// or a .gguf file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "model/gguf_model.h"
#include "speech/speech_model.h"
#include "stream/model_meta.h"
#include "tokenizer/tokenizer.h"

namespace gpstream::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

struct ModelInfo {
  bool gguf = false;
  model::ModelConfig config;
  std::map<std::string, int> dtypes;  // stored dtype name → tensors
  std::optional<int32_t> tokenizer_vocab;
  std::optional<int64_t> speech_encoder_parameters;
  stream::ModelMeta meta;
};

void count_dtypes(const io::TensorMap& t, std::map<std::string, int>& out) {
  for (const auto& [_, data] : t.tensors) ++out[io::dtype_name(data.dtype)];
}

Result<ModelInfo> read_info(const std::string& path) {
  ModelInfo info;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found(path + ": no such model file or directory");
  info.gguf = model::is_gguf_path(path);
  if (info.gguf) {
    GPS_ASSIGN(io::GgufFile g, io::read_gguf(path));
    GPS_ASSIGN(info.config, model::config_from_gguf(g));
    count_dtypes(g.tensors, info.dtypes);
  } else {
    GPS_ASSIGN(info.config, model::load_hf_config(path));
    GPS_ASSIGN(io::TensorMap t, io::read_safetensors_dir(path));
    count_dtypes(t, info.dtypes);
    if (speech::is_speech_model_dir(path)) {
      io::TensorMap enc;
      GPS_TRY(io::read_safetensors((std::filesystem::path(path) / speech::kSpeechEncoderFile).string(), enc));
      int64_t n = 0;
      for (const auto& [_, data] : enc.tensors) n += data.numel();
      info.speech_encoder_parameters = n;
    }
  }
  if (auto tok = tokenizer::Tokenizer::load(path); tok.ok()) info.tokenizer_vocab = tok->vocab_size();
  GPS_ASSIGN(info.meta, stream::ModelMeta::load(path));
  return info;
}

// "BF16 (56 tensors)", most frequent first.
std::string dtypes_text(const std::map<std::string, int>& dtypes) {
  std::vector<std::pair<std::string, int>> v(dtypes.begin(), dtypes.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [name, n] : v)
    s += (s.empty() ? "" : ", ") + name + " (" + std::to_string(n) + (n == 1 ? " tensor)" : " tensors)");
  return s;
}

ordered_json info_json(const std::string& path, const ModelInfo& info) {
  const auto& c = info.config;
  const auto& m = info.meta;
  ordered_json j;
  j["model"] = path;
  j["format"] = info.gguf ? "gguf" : "huggingface";
  j["architecture"] = c.architecture;
  j["model_type"] = c.model_type;
  j["parameters"] = c.n_params();
  j["layers"] = c.n_layer;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.n_ff;
  j["heads"] = c.n_head;
  j["kv_heads"] = c.n_head_kv;
  j["head_dim"] = c.head_dim;
  j["tied_embeddings"] = c.tie_word_embeddings;
  j["dtypes"] = info.dtypes;
  j["vocab_size"] = c.n_vocab;
  j["tokenizer_vocab_size"] =
      info.tokenizer_vocab ? ordered_json(*info.tokenizer_vocab) : ordered_json(nullptr);
  if (info.speech_encoder_parameters) j["speech_encoder_parameters"] = *info.speech_encoder_parameters;
  j["gpstream_json"] = m.from_file;
  j["template"] = {{"name", m.prompt_template.name},
                   {"prompt", m.prompt_template.prompt},
                   {"source_end", m.prompt_template.source_end},
                   {"header", m.prompt_template.header},
                   {"target_end", m.prompt_template.target_end}};
  j["source_lang"] = m.source_lang;
  j["target_lang"] = m.target_lang;
  j["paradigm"] = stream::paradigm_name(m.paradigm);
  j["phi"] = m.phi.to_string();
  j["k"] = m.k;
  j["k_min"] = m.k_min;
  j["k_max"] = m.k_max;
  j["beam"] = m.beam;
  j["end_after_source"] = m.end_after_source;
  j["policy"] = ordered_json::parse(stream::policy_json(m.policy));
  j["trained"] = ordered_json::parse(m.trained_json);
  return j;
}

void print_text(const std::string& path, const ModelInfo& info) {
  const auto& c = info.config;
  const auto& m = info.meta;
  auto line = [](const char* key, const std::string& value) {
    std::printf("%-18s %s\n", key, value.c_str());
  };
  char params[64];
  std::snprintf(params, sizeof params, "%zu (%.1fM)", c.n_params(), static_cast<double>(c.n_params()) / 1e6);
  line("model:", path + (info.gguf ? " (GGUF file)" : " (Hugging Face directory)"));
  line("architecture:", c.architecture + " (" + c.model_type + ")");
  line("parameters:", params);
  line("layers:", std::to_string(c.n_layer));
  line("hidden size:", std::to_string(c.n_embd) + " (" + std::to_string(c.n_head) + " heads, " +
                           std::to_string(c.n_head_kv) + " key/value heads of " + std::to_string(c.head_dim) +
                           "; feed-forward " + std::to_string(c.n_ff) + ")");
  line("dtype:", dtypes_text(info.dtypes));
  line("vocabulary:",
       std::to_string(c.n_vocab) + " embedding rows; tokenizer: " +
           (info.tokenizer_vocab ? std::to_string(*info.tokenizer_vocab) + " tokens" : "none found"));
  if (info.speech_encoder_parameters)
    line("speech encoder:", std::to_string(*info.speech_encoder_parameters) + " parameters (" +
                                speech::kSpeechEncoderFile + ")");
  line("gpstream.json:", m.from_file ? "yes" : "none: the built-in settings below, any language");
  const auto& t = m.prompt_template;
  line("template:", t.name + " (" + t.prompt + " … " + t.source_end + t.header + " … " + t.target_end + ")");
  line("languages:", m.source_lang + " to " + m.target_lang);
  line("paradigm:", std::string(stream::paradigm_name(m.paradigm)) + (m.from_file ? " (trained for)" : ""));
  line("phi:", m.phi.to_string());
  line("k:",
       std::to_string(m.k) + " (range " + std::to_string(m.k_min) + "-" + std::to_string(m.k_max) + ")");
  line("beam:", std::to_string(m.beam));
  line("end_after_source:", m.end_after_source ? "on" : "off");
  line("policy:", stream::policy_json(m.policy));
  const auto trained = ordered_json::parse(m.trained_json);
  if (trained.empty()) {
    line("trained:", "no record");
    return;
  }
  std::printf("trained:\n");
  for (const auto& [key, value] : trained.items())
    std::printf("  %-16s %s\n", (key + ":").c_str(),
                value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
}

int run_info(int argc, char** argv) {
  CLI::App app{
      "What a model is: architecture, size, dtype, vocabulary and its streaming settings (gpstream.json)",
      "gpstream info"};
  std::string path;
  bool json = false;
  app.add_option("model", path, "a Hugging Face model directory or a .gguf file")->required();
  app.add_flag("--json", json, "print one JSON object");
  if (auto rc = parse_args(app, argc, argv)) return *rc;
  auto info = read_info(path);
  if (!info.ok()) return fail("info", info.error());
  if (json)
    std::printf("%s\n", info_json(path, *info).dump(2).c_str());
  else
    print_text(path, *info);
  return kExitOk;
}

}  // namespace
}  // namespace gpstream::cli

GPSTREAM_COMMAND("info", "what a model is: architecture, size, dtype, vocabulary, streaming settings",
                 "gpstream info models/gpstream-en-fr", gpstream::cli::run_info);
