// Loading a streaming model directory.
#include "stream/streaming_model.h"

namespace gpstream::stream {

Result<StreamingModel> StreamingModel::load(const std::string& dir, int n_threads,
                                            const std::string& template_name, const std::string& src_lang,
                                            const std::string& tgt_lang) {
  StreamingModel m;
  GPS_ASSIGN(m.meta, ModelMeta::load(dir));
  if (!template_name.empty()) {
    GPS_ASSIGN(m.meta.prompt_template, tokenizer::Template::builtin(template_name));
  }
  if (!src_lang.empty()) m.meta.source_lang = src_lang;
  if (!tgt_lang.empty()) m.meta.target_lang = tgt_lang;
  GPS_ASSIGN(m.model, model::Transformer::load(dir, n_threads));
  GPS_ASSIGN(tokenizer::Tokenizer tok, tokenizer::Tokenizer::load(dir));
  if (tok.vocab_size() > m.model->config().n_vocab)
    return format_error(dir + ": tokenizer has " + std::to_string(tok.vocab_size()) +
                        " tokens but the model only " + std::to_string(m.model->config().n_vocab));
  m.tokenizer = std::make_shared<const tokenizer::Tokenizer>(std::move(tok));
  m.codec = std::make_unique<TokenizerCodec>(
      m.tokenizer, m.meta.prompt_template.with_languages(tokenizer::language_name(m.meta.source_lang),
                                                         tokenizer::language_name(m.meta.target_lang)));
  return m;
}

SessionOptions StreamingModel::default_options() const {
  SessionOptions o;
  o.paradigm = meta.paradigm;
  o.phi = meta.phi;
  o.positions_removed = meta.positions_removed;
  o.k = meta.k;
  o.end_after_source = meta.end_after_source;
  o.beam = meta.beam;
  o.policy = meta.policy;
  return o;
}

const std::shared_ptr<const SentenceEndModel>& StreamingModel::sentence_ends() const {
  if (!sentence_ends_) {
    auto built = SentenceEndModel::build(*model, *codec);
    sentence_ends_ = built ? std::move(built).value() : nullptr;
  }
  return *sentence_ends_;
}

}  // namespace gpstream::stream
