// Fast parsing of tokenizer.json: a SAX pass that builds the BPE vocabulary and merge list directly
// (they are ~99% of a big file; a JSON DOM of them costs seconds) and a small DOM of everything else,
// where "model.vocab" and "model.merges" are left as null. Catches duplicate vocabulary keys, which a
// DOM parse would silently collapse. Refuses JSON nested deeper than kMaxJsonDepth (json_sections.h), naming
// the top-level section, so no later recursive walk of the DOM (parsers, dump()) sees a deeper document.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/json_sections.h"

namespace gpstream::tokenizer {

struct ParsedTokenizerJson {
  Json rest;  // the document without model.vocab and model.merges (null there)
  bool has_vocab = false, has_merges = false;
  Vocab vocab;
  std::vector<std::pair<std::string, std::string>> merges;
};

Result<ParsedTokenizerJson> parse_tokenizer_json(std::string_view text, const std::string& where);

}  // namespace gpstream::tokenizer
