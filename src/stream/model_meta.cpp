// gpstream.json and prompt templates.
#include "stream/model_meta.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "model/gguf_model.h"
#include "model/model_convert.h"
#include "util/json_reader.h"
#include "util/mapped_file.h"

namespace gpstream::stream {

Result<ModelMeta> ModelMeta::parse(const std::string& text, const std::string& where) {
  using json = nlohmann::json;
  // The `trained` record is kept as text (dump(), recursive): deeper documents are refused while parsing.
  GPS_ASSIGN(json j, parse_json_object(text, where, kMaxModelMetaJsonDepth));
  // gpstream writes these files itself (to_json), so a key it does not know is a typo or a file from
  // elsewhere, refused rather than ignored ("k_mx" would otherwise leave k_max at its default).
  GPS_ASSIGN(JsonReader r, JsonReader::open(j, where, "", UnknownKeys::Refuse));
  ModelMeta m;
  constexpr int kMaxK = 1000000;
  GPS_TRY(r.optional("source_lang", m.source_lang));
  GPS_TRY(r.optional("target_lang", m.target_lang));
  GPS_TRY(r.optional("k", m.k, 1, kMaxK));
  GPS_TRY(r.optional("k_min", m.k_min, 1, kMaxK));
  GPS_TRY(r.optional("k_max", m.k_max, 1, kMaxK));
  GPS_TRY(r.optional("beam", m.beam, 1, kMaxK));
  if (m.k_min > m.k_max) {
    auto shown = [&](const char* key, int v) {
      std::string s = std::to_string(v);
      if (!j.contains(key)) s += ", the default";
      return s;
    };
    return format_error(where + ": field 'k_min' (" + shown("k_min", m.k_min) +
                        ") is greater than 'k_max' (" + shown("k_max", m.k_max) + ")");
  }
  if (auto phi = r.find("phi")) {
    GPS_ASSIGN(m.phi, phi_from_json(*phi));
  }
  if (auto p = r.find("paradigm")) {
    GPS_ASSIGN(std::string name, p->string());
    auto par = parse_paradigm(name);
    if (!par) return p->error("names an unknown paradigm '" + name + "' (known: " + paradigm_names() + ")");
    m.paradigm = *par;
  }
  if (auto p = r.find("positions_removed")) {
    GPS_ASSIGN(std::string name, p->string());
    auto removed = parse_positions_removed(name);
    if (!removed) return p->error("must be one of none, source, target, all (got '" + name + "')");
    m.positions_removed = *removed;
  }
  GPS_TRY(r.optional("end_after_source", m.end_after_source));
  if (auto p = r.find("policy")) {
    GPS_ASSIGN(JsonReader pr, p->object(UnknownKeys::Refuse));
    GPS_ASSIGN(JsonValue name_value, pr.require("name"));
    GPS_ASSIGN(std::string name, name_value.string());
    auto kind = parse_policy_name(name);
    if (!kind)
      return name_value.error("names an unknown policy '" + name + "' (known: " + policy_names() + ")");
    m.policy.kind = *kind;
    GPS_TRY(pr.optional("tau", m.policy.tau, 0.0, 1.0));
    GPS_TRY(pr.optional("min_lag", m.policy.min_lag, 0, kMaxPolicyLag));
    GPS_TRY(pr.optional("max_lag", m.policy.max_lag, 1, kMaxPolicyLag));
    GPS_TRY(pr.optional("frames", m.policy.frames, 1, kMaxPolicyLag));
    GPS_TRY(pr.optional("agreement", m.policy.agreement, 2, kMaxPolicyAgreement));
    if (auto layers = pr.find("layers")) {
      GPS_ASSIGN(std::vector<JsonValue> items, layers->elements(kMaxPolicyLayers));
      for (const JsonValue& v : items) {
        GPS_ASSIGN(int layer, v.integer<int>(0, kMaxPolicyLayers - 1));
        m.policy.layers.push_back(layer);
      }
    }
    GPS_TRY(pr.finish());
    if (Status st = validate_policy(m.policy); !st.ok())
      return p->error("is not a valid policy: " + st.error().message());
  }
  if (auto t = r.find("template")) {
    if (t->json().is_string()) {
      auto named = tokenizer::Template::builtin(t->json().get<std::string>());
      if (!named) return named.error().with_context(where);
      m.prompt_template = *named;
    } else if (t->json().is_object()) {
      GPS_ASSIGN(JsonReader tr, t->object(UnknownKeys::Refuse));
      GPS_TRY(tr.optional("name", m.prompt_template.name));
      GPS_TRY(tr.optional("prompt", m.prompt_template.prompt));
      GPS_TRY(tr.optional("source_end", m.prompt_template.source_end));
      GPS_TRY(tr.optional("header", m.prompt_template.header));
      GPS_TRY(tr.optional("target_end", m.prompt_template.target_end));
      GPS_TRY(tr.finish());
    } else {
      return t->error(std::string("must be a template name or an object, got ") + t->json().type_name());
    }
  }
  // `trained` is a free-form record, kept as it is.
  if (auto t = r.find("trained")) m.trained_json = t->json().dump();
  GPS_TRY(r.finish());
  return m;
}

Result<ModelMeta> ModelMeta::load(const std::string& model_dir) {
  if (model::is_gguf_path(model_dir)) {
    GPS_ASSIGN(io::GgufFile g, io::read_gguf(model_dir));
    const io::GgufValue* v = g.metadata.find(model::kGpstreamJsonGgufKey);
    if (!v) return ModelMeta();
    if (v->type != io::GgufType::String)
      return format_error(model_dir + ": metadata key " + model::kGpstreamJsonGgufKey + " is not a string");
    GPS_ASSIGN(ModelMeta m, parse(v->str, model_dir + ": " + model::kGpstreamJsonGgufKey));
    m.from_file = true;
    return m;
  }
  const std::string path = model_dir + "/gpstream.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ModelMeta();
  GPS_ASSIGN(std::string text, read_regular_text_file(path));
  GPS_ASSIGN(ModelMeta m, parse(text, path));
  m.from_file = true;
  return m;
}

std::string policy_json(const PolicySpec& spec) {
  nlohmann::ordered_json j = {{"name", policy_name(spec.kind)}};
  if (spec.kind == PolicyKind::WaitK) return j.dump();
  if (spec.kind == PolicyKind::Confidence) j["tau"] = spec.tau;
  if (spec.kind == PolicyKind::LocalAgreement) j["agreement"] = spec.agreement;
  if (spec.kind == PolicyKind::AlignAtt) {
    j["frames"] = spec.frames;
    if (!spec.layers.empty()) j["layers"] = spec.layers;
  }
  j["min_lag"] = spec.min_lag;
  j["max_lag"] = spec.max_lag;
  return j.dump();
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
  if (phi.source_length)
    j["phi"] = "S";
  else
    j["phi"] = phi.value;
  j["k"] = k;
  j["k_min"] = k_min;
  j["k_max"] = k_max;
  j["paradigm"] = paradigm_name(paradigm);
  if (positions_removed != PositionsRemoved::None)
    j["positions_removed"] = positions_removed_name(positions_removed);
  if (end_after_source) j["end_after_source"] = true;
  if (beam > 1) j["beam"] = beam;
  if (!(policy == PolicySpec{})) j["policy"] = nlohmann::ordered_json::parse(policy_json(policy));
  j["trained"] = nlohmann::ordered_json::parse(trained_json);
  return j.dump(2) + "\n";
}

}  // namespace gpstream::stream
