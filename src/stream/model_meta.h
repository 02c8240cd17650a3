// gpstream.json: how a model was trained for streaming, stored beside its weights, so commands run it
// with the settings it was trained for unless the user overrides them (DESIGN.md).
//   {"template": {"name": "gpstream", "prompt": "<s>", "source_end": "</src>", "header": "<tgt>",
//                 "target_end": "</s>"},
//    "source_lang": "en", "target_lang": "fr", "phi": 0 | "S", "k": 5, "k_min": 1, "k_max": 9,
//    "paradigm": "group", "trained": {...free-form training record...}}
// Template strings may hold {src} and {tgt}, replaced by the language names.
#pragma once

#include <optional>
#include <string>

#include "stream/paradigm.h"
#include "util/error.h"

namespace gpstream::stream {

struct PromptTemplate {
  std::string name = "gpstream";
  std::string prompt = "<s>";
  std::string source_end = "</src>";
  std::string header = "<tgt>";
  std::string target_end = "</s>";

  // The reference templates of gpe.md §9 ("qwen", "llama3", "gemma2") and gpstream's own ("gpstream").
  static std::optional<PromptTemplate> named(const std::string& name);
  // Replaces {src}/{tgt} with language names.
  PromptTemplate with_languages(const std::string& src, const std::string& tgt) const;
};

struct ModelMeta {
  PromptTemplate prompt_template;
  std::string source_lang = "en";
  std::string target_lang = "fr";
  Phi phi;
  int k = 5;
  int k_min = 1;
  int k_max = 9;
  Paradigm paradigm = Paradigm::Group;
  std::string trained_json = "{}";  // kept verbatim

  static Result<ModelMeta> parse(const std::string& text, const std::string& where);
  // Reads MODEL_DIR/gpstream.json; a model without one gets the defaults above.
  static Result<ModelMeta> load(const std::string& model_dir);
  std::string to_json() const;
};

// Full language name for a code ("fr" → "French"); unknown codes are returned unchanged.
std::string language_name(const std::string& code);

}  // namespace gpstream::stream
