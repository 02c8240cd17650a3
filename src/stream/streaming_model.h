// A model ready to stream: weights (model::Transformer), tokenizer, and its gpstream.json settings,
// loaded from one Hugging Face directory. Commands start here.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "model/transformer.h"
#include "stream/model_meta.h"
#include "stream/session.h"
#include "stream/tokenizer_codec.h"

namespace gpstream::stream {

struct StreamingModel {
  std::unique_ptr<model::Transformer> model;
  std::shared_ptr<const tokenizer::Tokenizer> tokenizer;
  ModelMeta meta;
  std::unique_ptr<TokenizerCodec> codec;
  // template_name: override the model's template ("" keeps it); languages: override codes ("" keeps).
  static Result<StreamingModel> load(const std::string& dir, int n_threads = 0,
                                     const std::string& template_name = "", const std::string& src_lang = "",
                                     const std::string& tgt_lang = "");
  // Session options with the model's defaults (no model-decided sentence ends: sentence_ends() below).
  SessionOptions default_options() const;
  // The model's own sentence ends for unpunctuated text (SessionOptions::sentence_ends), for codec's prompt,
  // built on the first call (it decodes every vocabulary id and forwards the prompt; not thread-safe); null
  // where the vocabulary has no sentence-end mark (then only punctuation and the word limit end segments).
  const std::shared_ptr<const SentenceEndModel>& sentence_ends() const;

 private:
  mutable std::optional<std::shared_ptr<const SentenceEndModel>> sentence_ends_;
};

}  // namespace gpstream::stream
