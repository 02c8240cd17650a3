#include "eval/tokenizers.h"

namespace gpstream::eval {

std::string tokenize(BleuTokenizer tok, std::string_view line) {
  switch (tok) {
    case BleuTokenizer::None:
      return tokenize_none(line);
    case BleuTokenizer::Tok13a:
      return tokenize_13a(line);
    case BleuTokenizer::Intl:
      return tokenize_intl(line);
    case BleuTokenizer::Char:
      return tokenize_char(line);
  }
  GPS_ASSERT(false, "unknown tokenizer");
}

std::string_view tokenizer_name(BleuTokenizer tok) {
  switch (tok) {
    case BleuTokenizer::None:
      return "none";
    case BleuTokenizer::Tok13a:
      return "13a";
    case BleuTokenizer::Intl:
      return "intl";
    case BleuTokenizer::Char:
      return "char";
  }
  GPS_ASSERT(false, "unknown tokenizer");
}

Result<BleuTokenizer> parse_tokenizer(std::string_view name) {
  for (auto t : {BleuTokenizer::None, BleuTokenizer::Tok13a, BleuTokenizer::Intl, BleuTokenizer::Char}) {
    if (tokenizer_name(t) == name) return t;
  }
  if (name == "zh" || name == "ja-mecab" || name == "ko-mecab" || name == "spm" || name == "flores101" ||
      name == "flores200")
    return unsupported("BLEU tokenizer '" + std::string(name) +
                       "' is not available in gpstream (supported: 13a, intl, char, none)");
  return invalid_argument("unknown BLEU tokenizer '" + std::string(name) +
                          "' (expected 13a, intl, char or none)");
}

}  // namespace gpstream::eval
