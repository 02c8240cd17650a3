#include "tokenizer/post_processor.h"

namespace gpstream::tokenizer {

namespace {
// ["<s>", 1] -> 1
Result<int32_t> named_id(JsonReader& r, const std::string& key, int64_t id_limit) {
  GPS_ASSIGN(JsonValue v, r.require(key));
  const Json& pair = v.json();
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) return v.error("must be [token, id]");
  GPS_ASSIGN(std::vector<JsonValue> items, v.elements(2));
  return items[1].integer<int32_t>(0, static_cast<int32_t>(id_limit - 1));
}

// Adds the BOS/EOS ids of the processor `j` at `where` (a path grown and shrunk in place) and `depth` (1 for
// the section itself; Sequences nest at most kMaxSectionDepth levels).
Status add(PostProcessor& p, const Json& j, std::string& where, int depth, int64_t id_limit) {
  GPS_ASSIGN(JsonReader r, open_section(j, where));
  std::string type;
  GPS_TRY(r.required("type", type));
  if (type == "ByteLevel") return {};
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    GPS_ASSIGN(int32_t cls, named_id(r, "cls", id_limit));
    GPS_ASSIGN(int32_t sep, named_id(r, "sep", id_limit));
    p.prefix.insert(p.prefix.begin(), cls);  // a later processor wraps what the earlier ones made
    p.suffix.push_back(sep);
    return {};
  }
  if (type == "Sequence") {
    GPS_ASSIGN(JsonValue list, r.require("processors"));
    GPS_ASSIGN(std::vector<JsonValue> steps, list.elements(kMaxSequenceSteps));
    if (!steps.empty() && depth >= kMaxSectionDepth) return section_depth_error(where);
    const size_t base = where.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      append_step(where, "processors", i);
      GPS_TRY(add(p, steps[i].json(), where, depth + 1, id_limit));
      where.resize(base);
    }
    return {};
  }
  if (type != "TemplateProcessing")
    return unsupported(where + ": unsupported post-processor type \"" + type + "\"");
  GPS_ASSIGN(JsonValue single_value, r.require("single"));
  GPS_ASSIGN(std::vector<JsonValue> single, single_value.elements(kMaxSequenceSteps));
  GPS_ASSIGN(JsonReader specials, r.required_object("special_tokens"));
  bool seen_sequence = false;
  std::vector<int32_t> pre, post;
  for (const JsonValue& entry : single) {
    const std::string& at = entry.path();
    GPS_ASSIGN(JsonReader piece, entry.object(UnknownKeys::Ignore));
    if (piece.has("Sequence")) {
      if (seen_sequence) return format_error(at + ": the sequence appears twice");
      seen_sequence = true;
      continue;
    }
    auto special = piece.find("SpecialToken");
    if (!special) return entry.error("must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    GPS_ASSIGN(JsonReader token, special->object(UnknownKeys::Ignore));
    std::string name;
    GPS_TRY(token.required("id", name));
    if (!specials.json().contains(name))
      return format_error(at + ": special token \"" + name + "\" not in special_tokens");
    GPS_ASSIGN(JsonReader listed, specials.required_object(name));
    GPS_ASSIGN(JsonValue ids_value, listed.require("ids"));
    GPS_ASSIGN(std::vector<JsonValue> ids, ids_value.elements(kMaxSequenceSteps));
    for (const JsonValue& id_value : ids) {
      GPS_ASSIGN(int32_t id, id_value.integer<int32_t>(0, static_cast<int32_t>(id_limit - 1)));
      (seen_sequence ? post : pre).push_back(id);
    }
  }
  if (!seen_sequence) return format_error(where + ".single: no {\"Sequence\": ...} entry");
  p.prefix.insert(p.prefix.begin(), pre.begin(), pre.end());
  p.suffix.insert(p.suffix.end(), post.begin(), post.end());
  return {};
}
}  // namespace

Result<PostProcessor> PostProcessor::from_json(const Json& j, const std::string& where, int64_t id_limit) {
  PostProcessor p;
  std::string path = where;
  GPS_TRY(add(p, j, path, 1, id_limit));
  return p;
}

}  // namespace gpstream::tokenizer
