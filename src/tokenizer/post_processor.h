// Post-processors of tokenizer.json ("post_processor") reduced to what a single sequence needs: the ids
// added before and after it when special tokens are requested. TemplateProcessing, RobertaProcessing,
// BertProcessing, ByteLevel (adds nothing to ids) and Sequence are supported.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/json_sections.h"
#include "util/error.h"

namespace gpstream::tokenizer {

struct PostProcessor {
  std::vector<int32_t> prefix, suffix;

  // Sequences nest at most kMaxSectionDepth levels.
  static Result<PostProcessor> from_json(const Json& j, const std::string& where, int64_t id_limit);
};

}  // namespace gpstream::tokenizer
