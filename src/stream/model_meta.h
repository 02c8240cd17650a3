// gpstream.json: how a model was trained for streaming, stored beside its weights, so commands run it
// with the settings it was trained for unless the user overrides them (DESIGN.md).
//   {"template": "gpstream" | {"name": ..., "prompt": ..., "source_end": ..., "header": ..., "target_end":
//   ...},
//    "source_lang": "en", "target_lang": "fr", "phi": 0 | "S", "k": 5, "k_min": 1, "k_max": 9,
//    "paradigm": "group", "positions_removed": "none", "end_after_source": false, "beam": 1,
//    "policy": {"name": "confidence", "tau": 0.5, "min_lag": 1, "max_lag": 8},
//    "trained": {...free-form training record...}}
// Template strings may hold {src} and {tgt}, replaced by the language names.
#pragma once

#include <optional>
#include <string>

#include "stream/paradigm.h"
#include "stream/policy.h"
#include "tokenizer/prompt_template.h"
#include "util/error.h"

namespace gpstream::stream {

// Deepest JSON nesting accepted in gpstream.json (the shipped models' nest 3 levels).
inline constexpr int kMaxModelMetaJsonDepth = 64;

struct ModelMeta {
  tokenizer::Template prompt_template = *tokenizer::Template::builtin("gpstream");
  std::string source_lang = "en";
  std::string target_lang = "fr";
  Phi phi;
  int k = 5;
  int k_min = 1;
  int k_max = 9;
  Paradigm paradigm = Paradigm::Group;
  PositionsRemoved positions_removed = PositionsRemoved::None;  // SessionOptions::positions_removed
  bool end_after_source = false;                                // SessionOptions::end_after_source
  int beam = 1;                     // SessionOptions::beam (word beam search; 1 = token by token)
  PolicySpec policy;                // SessionOptions::policy (wait-k with k by default)
  std::string trained_json = "{}";  // kept verbatim
  bool from_file = false;  // set by load(): read from a gpstream.json (or GGUF key), not the defaults

  static Result<ModelMeta> parse(const std::string& text, const std::string& where);
  // Reads MODEL_DIR/gpstream.json, or for a .gguf file the text under the metadata key
  // model::kGpstreamJsonGgufKey; a model without one gets the defaults above.
  static Result<ModelMeta> load(const std::string& model_dir);
  std::string to_json() const;
};

// The "policy" object of gpstream.json, one line: {"name": ...} and, unless wait-k, the settings that policy
// has (tau, agreement, frames and layers) and its lags. The server's ready message and `info` show the same.
std::string policy_json(const PolicySpec& spec);

}  // namespace gpstream::stream
