#include "tokenizer/json_loader.h"

#include <optional>

namespace gpstream::tokenizer {

namespace {

class Handler {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit Handler(ParsedTokenizerJson& out) : out_(out), dom_(out.rest, false) {}
  std::optional<Error> error;

  bool null() { return mode_ == Mode::Dom ? dom_.null() : fail_value("null"); }
  bool boolean(bool v) { return mode_ == Mode::Dom ? dom_.boolean(v) : fail_value("a boolean"); }
  bool number_float(number_float_t v, const string_t& s) {
    return mode_ == Mode::Dom ? dom_.number_float(v, s) : fail_value("a float");
  }
  bool binary(binary_t& v) { return mode_ == Mode::Dom ? dom_.binary(v) : fail_value("binary"); }
  bool number_integer(number_integer_t v) {
    if (mode_ == Mode::Vocab) {
      if (v < 0) return fail("model.vocab[\"" + key_ + "\"]: negative id " + std::to_string(v));
      return vocab_entry(static_cast<uint64_t>(v));
    }
    if (mode_ != Mode::Dom) return fail_value("an integer");
    return dom_.number_integer(v);
  }
  bool number_unsigned(number_unsigned_t v) {
    if (mode_ == Mode::Vocab) return vocab_entry(v);
    if (mode_ != Mode::Dom) return fail_value("an integer");
    return dom_.number_unsigned(v);
  }
  bool string(string_t& s) {
    if (mode_ == Mode::Merges) {
      size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size()) {
        return fail(merge_where() + ": expected \"left right\", got \"" + s + "\"");
      }
      out_.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      return true;
    }
    if (mode_ == Mode::MergePair) {
      if (pair_.size() >= 2) return fail(merge_where() + ": expected two strings");
      pair_.push_back(std::move(s));
      return true;
    }
    if (mode_ != Mode::Dom) return fail_value("a string");
    return dom_.string(s);
  }
  bool start_object(std::size_t n) {
    if (mode_ == Mode::Dom && depth_ == 2 && in_model_ && key_ == "vocab") {
      if (out_.has_vocab) return fail("model.vocab appears twice");
      mode_ = Mode::Vocab;
      out_.has_vocab = true;
      return true;
    }
    if (mode_ != Mode::Dom) return fail_value("an object");
    if (depth_ == 1 && key_ == "model") in_model_ = true;
    if (!enter()) return false;
    return dom_.start_object(n);
  }
  bool key(string_t& k) {
    if (mode_ == Mode::Vocab) {
      key_ = std::move(k);
      return true;
    }
    if (depth_ <= 2) key_ = k;
    if (depth_ == 1) section_ = k;
    return dom_.key(k);
  }
  bool end_object() {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Dom;
      return dom_.null();
    }
    --depth_;
    if (depth_ == 1) in_model_ = false;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (mode_ == Mode::Dom && depth_ == 2 && in_model_ && key_ == "merges") {
      if (out_.has_merges) return fail("model.merges appears twice");
      mode_ = Mode::Merges;
      out_.has_merges = true;
      out_.merges.reserve(out_.vocab.size() * 2);
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::MergePair;
      pair_.clear();
      return true;
    }
    if (mode_ != Mode::Dom) return fail_value("an array");
    if (!enter()) return false;
    return dom_.start_array(n);
  }
  bool end_array() {
    if (mode_ == Mode::MergePair) {
      if (pair_.size() != 2) return fail(merge_where() + ": expected [\"left\", \"right\"]");
      out_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mode_ = Mode::Merges;
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::Dom;
      return dom_.null();
    }
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (!error) error = format_error("invalid JSON at byte " + std::to_string(position) + ": " + e.what());
    return false;
  }

 private:
  enum class Mode { Dom, Vocab, Merges, MergePair };
  bool fail(std::string m) {
    if (!error) error = format_error(std::move(m));
    return false;
  }
  // One level deeper into the DOM part; refused past kMaxJsonDepth, naming the top-level section.
  bool enter() {
    if (++depth_ <= kMaxJsonDepth) return true;
    const std::string at = section_.empty() ? "the document" : section_;
    return fail(at + ": JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  std::string merge_where() const { return "model.merges[" + std::to_string(out_.merges.size()) + "]"; }
  bool fail_value(const char* got) {
    if (mode_ == Mode::Vocab)
      return fail("model.vocab[\"" + key_ + "\"]: expected an integer id, got " + got);
    return fail(merge_where() + ": expected \"left right\" or [\"left\", \"right\"], got " + got);
  }
  bool vocab_entry(uint64_t v) {
    if (v >= static_cast<uint64_t>(BpeModel::kMaxId)) {
      return fail("model.vocab[\"" + key_ + "\"]: id " + std::to_string(v) + " is too large");
    }
    if (!out_.vocab.try_emplace(std::move(key_), static_cast<int32_t>(v)).second) {
      return fail("model.vocab: duplicate entry \"" + key_ + "\"");
    }
    return true;
  }

  ParsedTokenizerJson& out_;
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  Mode mode_ = Mode::Dom;
  int depth_ = 0;
  bool in_model_ = false;
  std::string key_;
  std::string section_;  // the top-level key being read
  std::vector<std::string> pair_;
};

}  // namespace

Result<ParsedTokenizerJson> parse_tokenizer_json(std::string_view text, const std::string& where) {
  ParsedTokenizerJson out;
  out.vocab.reserve(text.size() / 40);
  Handler h(out);
  bool ok = Json::sax_parse(text.begin(), text.end(), &h, Json::input_format_t::json, /*strict=*/true);
  if (!ok || h.error) {
    Error e = h.error ? *h.error : format_error("invalid JSON");
    return e.with_context(where);
  }
  if (out.rest.is_discarded()) return format_error(where + ": invalid JSON");
  return out;
}

}  // namespace gpstream::tokenizer
