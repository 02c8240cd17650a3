// tokenizer.json ↔ GGUF tokenizer.ggml.* metadata (see gguf_vocab.h).
#include "tokenizer/gguf_vocab.h"

#include <map>
#include <nlohmann/json.hpp>

#include "tokenizer/bpe_model.h"
#include "tokenizer/json_loader.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {
namespace {

using OJson = nlohmann::ordered_json;

// llama.cpp token types (tokenizer.ggml.token_type).
constexpr int64_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

OJson split_then_bytelevel(const char* regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"},
             {"add_prefix_space", false},
             {"trim_offsets", false},
             {"use_regex", false}}}}};
}

}  // namespace

Result<std::string> tokenizer_json_from_gguf(const io::GgufMetadata& m) {
  if (const io::GgufValue* hf = m.find("tokenizer.huggingface.json")) {
    if (hf->type != io::GgufType::String)
      return format_error("metadata key tokenizer.huggingface.json is not a string");
    return hf->str;
  }
  GPS_ASSIGN(std::string model, m.get_string("tokenizer.ggml.model", "none"));
  if (model == "none")
    return not_found("the GGUF file has no tokenizer (tokenizer.ggml.model is absent or none)");
  if (model == "llama")
    return unsupported(
        "SentencePiece vocabularies (tokenizer.ggml.model = llama) are not supported; convert the "
        "model from its Hugging Face directory (tokenizer.json) instead");
  if (model != "gpt2")
    return unsupported("tokenizer.ggml.model '" + model +
                       "' is not supported (supported: gpt2 byte-level BPE)");
  const io::GgufValue* tokens = m.find("tokenizer.ggml.tokens");
  if (!tokens || !tokens->is_array() || tokens->elem_type != io::GgufType::String)
    return format_error("tokenizer.ggml.tokens: missing or not an array of strings");
  const io::GgufValue* merges = m.find("tokenizer.ggml.merges");
  if (!merges || !merges->is_array() || merges->elem_type != io::GgufType::String)
    return format_error("tokenizer.ggml.merges: missing or not an array of strings");
  const io::GgufValue* types = m.find("tokenizer.ggml.token_type");
  if (types && (!types->is_array() || types->elem_type == io::GgufType::String ||
                types->elem_type == io::GgufType::F32 || types->elem_type == io::GgufType::F64 ||
                types->array_size() != tokens->strs.size()))
    return format_error(
        "tokenizer.ggml.token_type: must be an integer array as long as tokenizer.ggml.tokens");
  // Strings become JSON (tokenizer.json is UTF-8): a byte-level BPE vocabulary is always valid UTF-8, so
  // anything else is a malformed file, not something to pass on.
  for (size_t i = 0; i < tokens->strs.size(); ++i)
    if (!is_valid_utf8(tokens->strs[i]))
      return format_error("tokenizer.ggml.tokens: token " + std::to_string(i) + " is not valid UTF-8");
  for (size_t i = 0; i < merges->strs.size(); ++i)
    if (!is_valid_utf8(merges->strs[i]))
      return format_error("tokenizer.ggml.merges: merge " + std::to_string(i) + " is not valid UTF-8");
  GPS_ASSIGN(std::string pre, m.get_string("tokenizer.ggml.pre", "default"));
  OJson j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  OJson added = OJson::array();
  OJson vocab = OJson::object();
  // Appended in id order without ordered_json's per-insert key search (linear: quadratic over a 150k
  // vocabulary); `seen` already refuses a repeated token.
  OJson::object_t& vocab_entries = vocab.get_ref<OJson::object_t&>();
  vocab_entries.reserve(tokens->strs.size());
  std::map<std::string, int64_t> seen;
  for (size_t id = 0; id < tokens->strs.size(); ++id) {
    const std::string& tok = tokens->strs[id];
    const int64_t type = types ? types->ints[id] : kNormal;
    if (type == kUnused) continue;
    if (!seen.emplace(tok, static_cast<int64_t>(id)).second)
      return format_error("tokenizer.ggml.tokens: token '" + tok + "' appears twice (ids " +
                          std::to_string(seen[tok]) + " and " + std::to_string(id) + ")");
    if (type == kControl || type == kUserDefined) {
      added.push_back({{"id", id},
                       {"content", tok},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", type == kUserDefined},
                       {"special", type == kControl}});
    } else {
      vocab_entries.emplace_back(tok, id);
    }
  }
  j["added_tokens"] = added;
  if (pre == "qwen2") {
    j["normalizer"] = {{"type", "NFC"}};
    j["pre_tokenizer"] = split_then_bytelevel(kQwen2Regex);
  } else if (pre == "llama-bpe" || pre == "llama3") {
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = split_then_bytelevel(kLlama3Regex);
  } else if (pre == "gpt-2" || pre == "gpt2" || pre == "default") {
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  } else {
    return unsupported("tokenizer.ggml.pre '" + pre +
                       "' is not supported (supported: qwen2, llama-bpe, gpt-2, default)");
  }
  GPS_ASSIGN(bool add_bos, m.get_bool("tokenizer.ggml.add_bos_token", false));
  GPS_ASSIGN(int64_t bos, m.get_int("tokenizer.ggml.bos_token_id", -1));
  if (add_bos && bos >= 0 && static_cast<size_t>(bos) < tokens->strs.size()) {
    const std::string& b = tokens->strs[static_cast<size_t>(bos)];
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", b}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", b}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", b}, {"type_id", 1}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{b, {{"id", b}, {"ids", {bos}}, {"tokens", {b}}}}}}};
  } else {
    j["post_processor"] = {
        {"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}};
  }
  j["decoder"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  j["model"] = byte_level_bpe_model_json(std::move(vocab), merges->strs);
  return j.dump();
}

Result<Tokenizer> tokenizer_from_gguf(const io::GgufMetadata& m, const std::string& where) {
  auto text = tokenizer_json_from_gguf(m);
  if (!text.ok()) return text.error().with_context(where);
  std::string config;
  if (const io::GgufValue* c = m.find(kGgufTokenizerConfigKey); c && c->type == io::GgufType::String)
    config = c->str;
  return Tokenizer::from_json_text(*text, config, where + " (tokenizer)");
}

Result<Tokenizer> load_gguf_tokenizer(const std::string& path) {
  GPS_ASSIGN(io::GgufFile g, io::read_gguf(path));
  return tokenizer_from_gguf(g.metadata, path);
}

Status add_tokenizer_to_gguf(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                             int n_vocab, std::optional<int> bos, std::optional<int> eos,
                             io::GgufMetadata& m) {
  GPS_ASSIGN(ParsedTokenizerJson parsed, parse_tokenizer_json(tokenizer_json, "tokenizer.json"));
  using V = io::GgufValue;
  m.set("tokenizer.huggingface.json", V::string(std::string(tokenizer_json)));
  if (!tokenizer_config_json.empty())
    m.set(kGgufTokenizerConfigKey, V::string(std::string(tokenizer_config_json)));
  // A Hugging Face file: keys not read here are skipped.
  GPS_ASSIGN(JsonReader rest, JsonReader::open(parsed.rest, "tokenizer.json", "", UnknownKeys::Ignore));
  bool bpe = false;
  if (auto model = rest.find("model"); model && model->json().is_object()) {
    GPS_ASSIGN(JsonReader model_fields, model->object(UnknownKeys::Ignore));
    std::string type = "BPE";
    GPS_TRY(model_fields.optional("type", type));
    bpe = type == "BPE";
  }
  // The byte-level pre-tokenizer and its split regex decide what llama.cpp calls the "pre" type.
  std::string pre;
  const auto pre_tokenizer = rest.find("pre_tokenizer");
  const std::string pt = pre_tokenizer ? pre_tokenizer->json().dump() : "";
  const auto has = [&](const char* regex) { return pt.find(Json(regex).dump()) != std::string::npos; };
  if (has(kQwen2Regex))
    pre = "qwen2";
  else if (has(kLlama3Regex))
    pre = "llama-bpe";
  else if (pt.find("\"ByteLevel\"") != std::string::npos &&
           pt.find("\"use_regex\":true") != std::string::npos)
    pre = "gpt-2";
  if (!bpe || pre.empty() || !parsed.has_vocab) {
    // Not a vocabulary llama.cpp's BPE tokenizer reproduces: gpstream still reads tokenizer.huggingface.json.
    m.set("tokenizer.ggml.model", V::string("none"));
    return {};
  }
  std::vector<std::string> tokens(static_cast<size_t>(n_vocab));
  std::vector<int64_t> types(static_cast<size_t>(n_vocab), kUnused);
  auto put = [&](const std::string& tok, int64_t id, int64_t type) -> Status {
    if (id < 0 || id >= n_vocab)
      return format_error("tokenizer.json: token '" + tok + "' has id " + std::to_string(id) +
                          ", outside the model's " + std::to_string(n_vocab) + " rows");
    tokens[static_cast<size_t>(id)] = tok;
    types[static_cast<size_t>(id)] = type;
    return {};
  };
  for (const auto& [tok, id] : parsed.vocab) GPS_TRY(put(tok, id, kNormal));
  if (auto added = rest.find("added_tokens")) {
    GPS_ASSIGN(std::vector<JsonValue> entries, added->elements(static_cast<size_t>(n_vocab)));
    for (const JsonValue& entry : entries) {
      GPS_ASSIGN(JsonReader a, entry.object(UnknownKeys::Ignore));
      int64_t id = 0;
      std::string content;
      bool special = false;
      GPS_TRY(a.required("id", id, 0, n_vocab - 1));
      GPS_TRY(a.required("content", content));
      GPS_TRY(a.optional("special", special));
      GPS_TRY(put(content, id, special ? kControl : kUserDefined));
    }
  }
  for (size_t id = 0; id < tokens.size(); ++id)
    if (types[id] == kUnused) tokens[id] = "[PAD" + std::to_string(id) + "]";
  std::vector<std::string> merges;
  merges.reserve(parsed.merges.size());
  for (const auto& [a, b] : parsed.merges) merges.push_back(a + " " + b);
  m.set("tokenizer.ggml.model", V::string("gpt2"));
  m.set("tokenizer.ggml.pre", V::string(pre));
  m.set("tokenizer.ggml.tokens", V::string_array(std::move(tokens)));
  m.set("tokenizer.ggml.token_type", V::int_array(io::GgufType::I32, std::move(types)));
  m.set("tokenizer.ggml.merges", V::string_array(std::move(merges)));
  if (bos) m.set("tokenizer.ggml.bos_token_id", V::u32(static_cast<uint32_t>(*bos)));
  if (eos) m.set("tokenizer.ggml.eos_token_id", V::u32(static_cast<uint32_t>(*eos)));
  // llama.cpp adds BOS itself when told; tokenizer.json says so with a template that starts with a special
  // token.
  bool add_bos = false;
  if (auto post = rest.find("post_processor"); post && post->json().is_object()) {
    GPS_ASSIGN(JsonReader processor, post->object(UnknownKeys::Ignore));
    std::string type;
    GPS_TRY(processor.optional("type", type));
    const auto single = processor.find("single");
    if (type == "TemplateProcessing" && single && single->json().is_array() && !single->json().empty())
      add_bos = single->json()[0].is_object() && single->json()[0].contains("SpecialToken");
  }
  m.set("tokenizer.ggml.add_bos_token", V::boolean(add_bos));
  return {};
}

}  // namespace gpstream::tokenizer
