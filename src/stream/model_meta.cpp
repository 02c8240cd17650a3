// gpstream.json and prompt templates.
#include "stream/model_meta.h"

#include "io/gguf.h"
#include "model/gguf_model.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>

#include "util/json_text.h"
#include "util/mapped_file.h"

namespace gpstream::stream {

namespace {

// Every key to_json() writes; `trained` is a free-form record, kept as it is.
constexpr const char* kKeys[] = {"template", "source_lang", "target_lang",      "phi",  "k",      "k_min",
                                 "k_max",    "paradigm",    "end_after_source", "beam", "trained"};
constexpr const char* kTemplateKeys[] = {"name", "prompt", "source_end", "header", "target_end"};

// The first key of `j` not in `keys`, if any.
template <size_t N>
std::optional<std::string> unknown_key(const nlohmann::json& j, const char* const (&keys)[N]) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(std::begin(keys), std::end(keys), it.key()) == std::end(keys)) return it.key();
  }
  return std::nullopt;
}

template <size_t N>
std::string known_keys(const char* const (&keys)[N]) {
  std::string out;
  for (const char* k : keys) {
    if (!out.empty()) out += ' ';
    out += k;
  }
  return out;
}

}  // namespace

Result<ModelMeta> ModelMeta::parse(const std::string& text, const std::string& where) {
  using json = nlohmann::json;
  // The `trained` record is kept as text (dump(), recursive): deeper documents are refused while parsing.
  GPS_ASSIGN(json j, parse_json_bounded(text, where, kMaxModelMetaJsonDepth));
  if (!j.is_object()) return format_error(where + ": not a JSON object");
  // gpstream writes these files itself (to_json), so a key it does not know is a typo or a file from
  // elsewhere, refused rather than ignored ("k_mx" would otherwise leave k_max at its default).
  if (auto key = unknown_key(j, kKeys))
    return format_error(where + ": unknown key '" + *key + "' (known: " + known_keys(kKeys) + ")");
  ModelMeta m;
  auto str = [&](const char* key, std::string& out) -> Status {
    if (!j.contains(key)) return {};
    if (!j[key].is_string()) return format_error(where + ": field '" + key + "' must be a string");
    out = j[key].get<std::string>();
    return {};
  };
  auto integer = [&](const char* key, int& out) -> Status {
    if (!j.contains(key)) return {};
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < 1 || j[key].get<int64_t>() > 1000000)
      return format_error(where + ": field '" + key + "' must be a positive integer");
    out = j[key].get<int>();
    return {};
  };
  GPS_TRY(str("source_lang", m.source_lang));
  GPS_TRY(str("target_lang", m.target_lang));
  GPS_TRY(integer("k", m.k));
  GPS_TRY(integer("k_min", m.k_min));
  GPS_TRY(integer("k_max", m.k_max));
  GPS_TRY(integer("beam", m.beam));
  if (m.k_min > m.k_max) {
    auto shown = [&](const char* key, int v) {
      std::string s = std::to_string(v);
      if (!j.contains(key)) s += ", the default";
      return s;
    };
    return format_error(where + ": field 'k_min' (" + shown("k_min", m.k_min) +
                        ") is greater than 'k_max' (" + shown("k_max", m.k_max) + ")");
  }
  if (j.contains("phi")) {
    std::string s = j["phi"].is_string() ? j["phi"].get<std::string>() : j["phi"].is_number() ? j["phi"].dump() : "";
    auto phi = Phi::parse(s);
    if (!phi) return format_error(where + ": field 'phi' must be a non-negative number or \"S\"");
    m.phi = *phi;
  }
  if (j.contains("paradigm")) {
    std::string p;
    GPS_TRY(str("paradigm", p));
    auto par = parse_paradigm(p);
    if (!par) return format_error(where + ": unknown paradigm '" + p + "' (known: " + paradigm_names() + ")");
    m.paradigm = *par;
  }
  if (j.contains("end_after_source")) {
    if (!j["end_after_source"].is_boolean())
      return format_error(where + ": field 'end_after_source' must be true or false");
    m.end_after_source = j["end_after_source"].get<bool>();
  }
  if (j.contains("template")) {
    const json& t = j["template"];
    if (t.is_string()) {
      auto named = tokenizer::Template::builtin(t.get<std::string>());
      if (!named) return named.error().with_context(where);
      m.prompt_template = *named;
    } else if (t.is_object()) {
      if (auto key = unknown_key(t, kTemplateKeys))
        return format_error(where + ": unknown key 'template." + *key +
                            "' (known: " + known_keys(kTemplateKeys) + ")");
      for (auto [key, field] : {std::pair<const char*, std::string*>{"name", &m.prompt_template.name},
                                {"prompt", &m.prompt_template.prompt},
                                {"source_end", &m.prompt_template.source_end},
                                {"header", &m.prompt_template.header},
                                {"target_end", &m.prompt_template.target_end}}) {
        if (!t.contains(key)) continue;
        if (!t[key].is_string()) return format_error(where + ": template." + key + " must be a string");
        *field = t[key].get<std::string>();
      }
    } else {
      return format_error(where + ": field 'template' must be a name or an object");
    }
  }
  if (j.contains("trained")) m.trained_json = j["trained"].dump();
  return m;
}

Result<ModelMeta> ModelMeta::load(const std::string& model_dir) {
  if (model::is_gguf_path(model_dir)) {
    GPS_ASSIGN(io::GgufFile g, io::read_gguf(model_dir));
    const io::GgufValue* v = g.metadata.find(kGgufKey);
    if (!v) return ModelMeta{};
    if (v->type != io::GgufType::String) return format_error(model_dir + ": metadata key " + kGgufKey + " is not a string");
    GPS_ASSIGN(ModelMeta m, parse(v->str, model_dir + ": " + kGgufKey));
    m.from_file = true;
    return m;
  }
  const std::string path = model_dir + "/gpstream.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ModelMeta{};
  GPS_ASSIGN(std::string text, read_regular_text_file(path));
  GPS_ASSIGN(ModelMeta m, parse(text, path));
  m.from_file = true;
  return m;
}

std::string ModelMeta::to_json() const {
  nlohmann::ordered_json j;
  j["template"] = {{"name", prompt_template.name},
                   {"prompt", prompt_template.prompt},
                   {"source_end", prompt_template.source_end},
                   {"header", prompt_template.header},
                   {"target_end", prompt_template.target_end}};
  j["source_lang"] = source_lang;
  j["target_lang"] = target_lang;
  if (phi.source_length) j["phi"] = "S";
  else j["phi"] = phi.value;
  j["k"] = k;
  j["k_min"] = k_min;
  j["k_max"] = k_max;
  j["paradigm"] = paradigm_name(paradigm);
  if (end_after_source) j["end_after_source"] = true;
  if (beam > 1) j["beam"] = beam;
  j["trained"] = nlohmann::ordered_json::parse(trained_json);
  return j.dump(2) + "\n";
}

}  // namespace gpstream::stream
