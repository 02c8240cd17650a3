#include "tokenizer/tokenizer.h"

#include <filesystem>

#include "tokenizer/gguf_vocab.h"
#include "tokenizer/json_loader.h"
#include "tokenizer/unicode.h"
#include "util/mapped_file.h"

namespace gpstream::tokenizer {

namespace {
constexpr const char* kMetaspace = "\xE2\x96\x81";  // '▁'

// The Decoder's notion of style: ByteLevel decoding, or '▁' turned into spaces.
TokenizerStyle detect_style(const Decoder* d, const PreTokenizer* p) {
  if (p && p->is_byte_level()) return TokenizerStyle::ByteLevel;
  if (!d) return TokenizerStyle::Other;
  std::vector<const Decoder*> steps{d};
  for (const auto& c : d->children) steps.push_back(&c);
  for (const Decoder* s : steps) {
    if (s->kind == Decoder::Kind::ByteLevel) return TokenizerStyle::ByteLevel;
    if (s->kind == Decoder::Kind::Metaspace) return TokenizerStyle::SentencePiece;
    if (s->kind == Decoder::Kind::Replace && s->pattern.source() == kMetaspace)
      return TokenizerStyle::SentencePiece;
  }
  return TokenizerStyle::Other;
}
}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0) return load_gguf_tokenizer(path);
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(file, ec)) file /= "tokenizer.json";
  if (!fs::exists(file, ec)) return not_found("no tokenizer.json at " + file.string());
  GPS_ASSIGN(std::string text, read_regular_text_file(file.string()));
  std::string config;
  fs::path config_path = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path, ec)) {
    GPS_ASSIGN(config, read_regular_text_file(config_path.string()));
  }
  return from_json_text(text, config, file.string());
}

Result<Tokenizer> Tokenizer::from_json_text(std::string_view json_text, std::string_view config_json,
                                            const std::string& where) {
  GPS_ASSIGN(ParsedTokenizerJson parsed, parse_tokenizer_json(json_text, where));
  // A Hugging Face file: keys gpstream does not read are skipped, as the `tokenizers` library does.
  GPS_ASSIGN(JsonReader top, JsonReader::open(parsed.rest, where, "", UnknownKeys::Ignore));
  Tokenizer t;
  try {
    GPS_ASSIGN(JsonValue model, top.require("model"));
    auto m = BpeModel::from_json(model.json(), "model", parsed.has_vocab ? &parsed.vocab : nullptr,
                                 parsed.has_merges ? &parsed.merges : nullptr);
    if (!m.ok()) return m.error().with_context(where);
    t.model_ = std::move(m).value();

    auto opt = [&](const char* key) -> const Json* {
      auto v = top.find(key);
      return v ? &v->json() : nullptr;
    };
    if (const Json* n = opt("normalizer")) {
      auto r = Normalizer::from_json(*n, "normalizer");
      if (!r.ok()) return r.error().with_context(where);
      t.normalizer_ = std::make_unique<Normalizer>(std::move(r).value());
    }
    if (const Json* p = opt("pre_tokenizer")) {
      auto r = PreTokenizer::from_json(*p, "pre_tokenizer");
      if (!r.ok()) return r.error().with_context(where);
      t.pre_tokenizer_ = std::make_unique<PreTokenizer>(std::move(r).value());
    }
    if (const Json* d = opt("decoder")) {
      auto r = Decoder::from_json(*d, "decoder");
      if (!r.ok()) return r.error().with_context(where);
      t.decoder_ = std::make_unique<Decoder>(std::move(r).value());
    }
    // truncation and padding do not change encode() of one text: skipped.

    // Added tokens: an id of a token already in the vocabulary must agree with it.
    std::vector<AddedToken> added;
    if (auto list = top.find("added_tokens")) {
      // At most one added token per id.
      GPS_ASSIGN(std::vector<JsonValue> entries, list->elements(static_cast<size_t>(BpeModel::kMaxId)));
      for (const JsonValue& entry : entries) {
        const std::string at = where + ": " + entry.path();
        GPS_ASSIGN(JsonReader e, entry.object(UnknownKeys::Ignore));
        AddedToken tok;
        GPS_TRY(e.required("id", tok.id, 0, static_cast<int32_t>(BpeModel::kMaxId - 1)));
        GPS_TRY(e.required("content", tok.content));
        if (tok.content.empty()) return format_error(at + ": empty content");
        if (!is_valid_utf8(tok.content)) return format_error(at + ": content is not valid UTF-8");
        tok.special = tok.lstrip = tok.rstrip = tok.single_word = false;
        GPS_TRY(e.optional("special", tok.special));
        GPS_TRY(e.optional("lstrip", tok.lstrip));
        GPS_TRY(e.optional("rstrip", tok.rstrip));
        GPS_TRY(e.optional("single_word", tok.single_word));
        tok.normalized = !tok.special;
        GPS_TRY(e.optional("normalized", tok.normalized));
        if (auto v = t.model_.token_to_id(tok.content); v && *v != tok.id) {
          return format_error(at + ": \"" + tok.content + "\" has id " + std::to_string(tok.id) +
                              " but the vocabulary gives it id " + std::to_string(*v));
        }
        if (const std::string* other = t.model_.id_to_token(tok.id); other && *other != tok.content) {
          return format_error(at + ": id " + std::to_string(tok.id) + " of \"" + tok.content +
                              "\" belongs to vocabulary token \"" + *other + "\"");
        }
        auto prev = t.added_by_content_.find(tok.content);
        if (prev != t.added_by_content_.end()) {
          if (prev->second != tok.id) {
            return format_error(at + ": \"" + tok.content + "\" appears twice with different ids");
          }
          continue;  // an exact repeat (llama-2 files list <s> twice)
        }
        t.added_by_content_.emplace(tok.content, tok.id);
        added.push_back(std::move(tok));
      }
    }
    // The table of all tokens spans ids 0..size-1: bound it by the entries (as BpeModel bounds its own).
    int32_t size = t.model_.id_limit();
    int64_t entries = static_cast<int64_t>(t.model_.vocab_entries());
    const AddedToken* largest = nullptr;
    for (const auto& a : added) {
      if (a.id + 1 > size) {
        size = a.id + 1;
        largest = &a;
      }
      if (!t.model_.id_to_token(a.id)) ++entries;
    }
    if (largest && size - entries > BpeModel::kMaxUnusedIds)
      return out_of_range(
          where + ": added_tokens: id " + std::to_string(largest->id) + " of \"" + largest->content +
          "\" leaves " + std::to_string(size - entries) + " of the ids below it without a token (at most " +
          std::to_string(BpeModel::kMaxUnusedIds) + " may be; " + std::to_string(entries) + " entries)");
    t.vocab_size_ = size;
    t.added_index_.assign(static_cast<size_t>(size), -1);
    for (size_t i = 0; i < added.size(); ++i) {
      if (t.added_index_[added[i].id] >= 0) {
        return format_error(where + ": added_tokens: id " + std::to_string(added[i].id) +
                            " is given to both \"" + added[t.added_index_[added[i].id]].content +
                            "\" and \"" + added[i].content + "\"");
      }
      t.added_index_[added[i].id] = static_cast<int32_t>(i);
    }
    t.added_.set(std::move(added), t.normalizer_.get());

    if (const Json* p = opt("post_processor")) {
      auto r = PostProcessor::from_json(*p, "post_processor", t.vocab_size_);
      if (!r.ok()) return r.error().with_context(where);
      t.post_ = std::move(r).value();
    }
    t.style_ = detect_style(t.decoder_.get(), t.pre_tokenizer_.get());
    if (t.decoder_) {
      std::string probe;
      t.incremental_decoding_ = t.decoder_->token_bytes("a", true, probe);
    }
    GPS_TRY(t.load_config(config_json));
  } catch (const Json::exception& e) {
    return format_error(where + ": " + e.what());
  }
  return t;
}

Status Tokenizer::load_config(std::string_view config_json) {
  if (!post_.prefix.empty()) bos_id_ = post_.prefix.front();
  if (config_json.empty()) return {};
  const std::string file = "tokenizer_config.json";
  GPS_ASSIGN(Json c, parse_json_object(config_json, file, kMaxJsonDepth));
  // A Hugging Face file: keys gpstream does not read are skipped, as transformers does.
  GPS_ASSIGN(JsonReader config, JsonReader::open(c, file, "", UnknownKeys::Ignore));
  // A token as its text, or as an AddedToken object {"content": text, ...}.
  auto read = [&](const char* key, std::optional<int32_t>& out) -> Status {
    auto v = config.find(key);
    if (!v) return {};
    std::string text;
    if (v->json().is_object()) {
      GPS_ASSIGN(JsonReader token, v->object(UnknownKeys::Ignore));
      GPS_TRY(token.required("content", text));
    } else {
      GPS_ASSIGN(text, v->string());
    }
    auto id = token_to_id(text);
    if (!id) return v->error("\"" + text + "\" is not a token of tokenizer.json");
    out = *id;
    return {};
  };
  GPS_TRY(read("bos_token", bos_id_));
  GPS_TRY(read("eos_token", eos_id_));
  return {};
}

void Tokenizer::encode(std::string_view text, const EncodeOptions& options, std::vector<int32_t>& out) const {
  if (options.add_special) out.insert(out.end(), post_.prefix.begin(), post_.prefix.end());
  std::string repaired;
  if (!is_valid_utf8(text)) {
    repaired = sanitize_utf8(text);
    text = repaired;
  }
  thread_local std::vector<Segment> segments;
  thread_local std::vector<Piece> pieces;
  segments.clear();
  added_.extract_and_normalize(text, normalizer_.get(), options.prefix, segments);
  for (Segment& s : segments) {
    if (s.id >= 0) {
      out.push_back(s.id);
      continue;
    }
    if (s.text.empty()) continue;
    if (!pre_tokenizer_) {
      model_.encode(s.text, out);
      continue;
    }
    pieces.clear();
    pieces.push_back({std::move(s.text), s.at_start});
    pre_tokenizer_->apply(pieces, options.prefix);
    for (const Piece& p : pieces) model_.encode(p.text, out);
  }
  if (options.add_special) out.insert(out.end(), post_.suffix.begin(), post_.suffix.end());
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
  std::vector<int32_t> out;
  EncodeOptions o;
  o.add_special = add_special;
  encode(text, o, out);
  return out;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  auto it = added_by_content_.find(token);
  if (it != added_by_content_.end()) return it->second;
  return model_.token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (is_added(id)) return added_.tokens()[added_index_[id]].content;
  if (const std::string* t = model_.id_to_token(id)) return *t;
  return std::nullopt;
}

bool Tokenizer::is_added(int32_t id) const {
  return id >= 0 && id < vocab_size_ && added_index_[id] >= 0;
}

bool Tokenizer::is_special(int32_t id) const {
  return is_added(id) && added_.tokens()[added_index_[id]].special;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (skip_special && is_special(id)) continue;
    if (is_added(id)) {
      tokens.push_back(added_.tokens()[added_index_[id]].content);
    } else if (const std::string* t = model_.id_to_token(id)) {
      tokens.push_back(*t);
    }
  }
  if (decoder_) return decoder_->decode(std::move(tokens));
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) out += ' ';
    out += tokens[i];
  }
  return out;
}

bool Tokenizer::token_bytes(int32_t id, bool first, std::string& out) const {
  const std::string* t = nullptr;
  if (is_added(id)) {
    t = &added_.tokens()[added_index_[id]].content;
  } else {
    t = model_.id_to_token(id);
  }
  if (!t) return false;
  if (!decoder_) {
    if (!first) out += ' ';
    out += *t;
    return true;
  }
  return decoder_->token_bytes(*t, first, out);
}

bool Tokenizer::starts_word(int32_t id) const {
  if (is_special(id)) return false;
  std::string b;
  if (!incremental_decoding_) {
    // Look at the token itself: '▁', or a byte-level char standing for a whitespace byte.
    auto t = id_to_token(id);
    if (!t || t->empty()) return false;
    if (t->rfind(kMetaspace, 0) == 0) return true;
    size_t i = 0;
    char32_t cp = next_code_point(*t, i);
    int byte = style_ == TokenizerStyle::ByteLevel ? char_to_byte(cp) : -1;
    return byte >= 0 ? (byte == ' ' || (byte >= '\t' && byte <= '\r')) : is_unicode_whitespace(cp);
  }
  if (!token_bytes(id, false, b) || b.empty()) return false;
  if (static_cast<uint8_t>(b[0]) < 0x80) return b[0] == ' ' || (b[0] >= '\t' && b[0] <= '\r');
  if (valid_sequence_length(b, 0) == 0) return false;
  size_t i = 0;
  return is_unicode_whitespace(next_code_point(b, i));
}

}  // namespace gpstream::tokenizer
