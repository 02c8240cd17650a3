// Fuzz target: loading a tokenizer.json (model, normalizer, pre-tokenizer, decoder, post-processor, added
// tokens), then encoding and decoding a fixed text with whatever loaded. Byte mutations seldom build deep
// structure, so an input that loads is loaded again with one of its sections wrapped in Sequences, from one
// level to 10,000 (the section and the depth chosen by the input's size), across the parsers' depth limits.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "tokenizer/tokenizer.h"

namespace {

using gpstream::tokenizer::kMaxSectionDepth;
using nlohmann::json;

// Loads `text`; an accepted tokenizer encodes and decodes. True if it loaded.
bool load(std::string_view text) {
  auto tok = gpstream::tokenizer::Tokenizer::from_json_text(text);
  if (!tok.ok()) return false;
  const auto ids = tok->encode("Hello, world! Ça va? 123 <s>", true);
  (void)tok->decode(ids);
  return true;
}

// `doc` with `section` wrapped in `levels` Sequences, spliced as text (a DOM that deep would be dumped
// recursively).
std::string nest(json doc, const char* section, const char* list, int levels) {
  const std::string inner = doc[section].dump(-1, ' ', false, json::error_handler_t::replace);
  doc.erase(section);
  std::string out = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  if (out.size() > 1) out += ',';
  out += '"' + std::string(section) + "\":";
  for (int i = 0; i < levels; ++i) out += R"({"type":"Sequence",")" + std::string(list) + "\":[";
  out += inner;
  for (int i = 0; i < levels; ++i) out += "]}";
  return out + "}";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpstream::fuzz::as_text(data, size);
  if (!load(text)) return 0;
  // The loader refused anything nested deeper than kMaxJsonDepth, so this DOM is safe to walk.
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  static constexpr const char* kSections[][2] = {{"normalizer", "normalizers"},
                                                 {"pre_tokenizer", "pretokenizers"},
                                                 {"decoder", "decoders"},
                                                 {"post_processor", "processors"}};
  static constexpr int kLevels[] = {1, kMaxSectionDepth - 2, kMaxSectionDepth - 1, kMaxSectionDepth, 10000};
  const auto& s = kSections[size % 4];
  if (!doc.is_object() || !doc.contains(s[0]) || doc[s[0]].is_null()) return 0;
  (void)load(nest(doc, s[0], s[1], kLevels[size / 4 % 5]));
  return 0;
}
