#include "tokenizer/post_processor.h"

namespace gpstream::tokenizer {

namespace {
// ["<s>", 1] -> 1
Result<int32_t> named_id(const Json& j, const std::string& key, const std::string& where, int64_t id_limit) {
  GPS_ASSIGN(const Json* v, json_field(j, key, where));
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_string()) {
    return format_error(where + "." + key + ": expected [token, id]");
  }
  GPS_ASSIGN(int64_t id, json_index((*v)[1], where + "." + key + "[1]", id_limit));
  return static_cast<int32_t>(id);
}

// Adds the BOS/EOS ids of the processor `j` at `where` (a path grown and shrunk in place) and `depth` (1 for
// the section itself; Sequences nest at most kMaxSectionDepth levels).
Status add(PostProcessor& p, const Json& j, std::string& where, int depth, int64_t id_limit) {
  GPS_ASSIGN(std::string type, json_string(j, "type", where));
  if (type == "ByteLevel") return {};
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    GPS_ASSIGN(int32_t cls, named_id(j, "cls", where, id_limit));
    GPS_ASSIGN(int32_t sep, named_id(j, "sep", where, id_limit));
    p.prefix.insert(p.prefix.begin(), cls);  // a later processor wraps what the earlier ones made
    p.suffix.push_back(sep);
    return {};
  }
  if (type == "Sequence") {
    GPS_ASSIGN(const Json* list, json_field(j, "processors", where));
    if (!list->is_array()) return json_type_error(where + ".processors", "an array", *list);
    if (!list->empty() && depth >= kMaxSectionDepth) return section_depth_error(where);
    const size_t base = where.size();
    for (size_t i = 0; i < list->size(); ++i) {
      append_step(where, "processors", i);
      GPS_TRY(add(p, (*list)[i], where, depth + 1, id_limit));
      where.resize(base);
    }
    return {};
  }
  if (type != "TemplateProcessing")
    return unsupported(where + ": unsupported post-processor type \"" + type + "\"");
  GPS_ASSIGN(const Json* single, json_field(j, "single", where));
  if (!single->is_array()) return json_type_error(where + ".single", "an array", *single);
  GPS_ASSIGN(const Json* specials, json_field(j, "special_tokens", where));
  if (!specials->is_object()) return json_type_error(where + ".special_tokens", "an object", *specials);
  bool seen_sequence = false;
  std::vector<int32_t> pre, post;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json& piece = (*single)[i];
    std::string at = where + ".single[" + std::to_string(i) + "]";
    if (piece.is_object() && piece.contains("Sequence")) {
      if (seen_sequence) return format_error(at + ": the sequence appears twice");
      seen_sequence = true;
      continue;
    }
    if (!piece.is_object() || !piece.contains("SpecialToken")) {
      return format_error(at + ": expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
    GPS_ASSIGN(std::string name, json_string(piece["SpecialToken"], "id", at + ".SpecialToken"));
    auto it = specials->find(name);
    if (it == specials->end())
      return format_error(at + ": special token \"" + name + "\" not in special_tokens");
    GPS_ASSIGN(const Json* ids, json_field(*it, "ids", where + ".special_tokens." + name));
    if (!ids->is_array())
      return json_type_error(where + ".special_tokens." + name + ".ids", "an array", *ids);
    for (size_t k = 0; k < ids->size(); ++k) {
      GPS_ASSIGN(int64_t id, json_index((*ids)[k], where + ".special_tokens." + name + ".ids", id_limit));
      (seen_sequence ? post : pre).push_back(static_cast<int32_t>(id));
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
