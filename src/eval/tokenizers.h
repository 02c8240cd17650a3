// sacreBLEU's BLEU tokenizers (sacrebleu/tokenizers/, 2.6.0; metrics.md B.1), one file each:
// 13a (mteval-v13a), intl (mteval-v14 international), char and none. Each maps one line to the
// tokenized line; BLEU then splits it on Python whitespace. zh, ja-mecab, ko-mecab and spm are
// not provided (they need external dictionaries or models).
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream::eval {

enum class BleuTokenizer { None, Tok13a, Intl, Char };

// tokenizer_13a.cpp: `Tokenizer13a.__call__`.
std::string tokenize_13a(std::string_view line);
// tokenizer_intl.cpp: `TokenizerV14International.__call__` (Unicode categories from libutf8proc).
std::string tokenize_intl(std::string_view line);
// tokenizer_char.cpp: `' '.join(line)` over code points.
std::string tokenize_char(std::string_view line);
// tokenizer_none.cpp: identity.
std::string tokenize_none(std::string_view line);

std::string tokenize(BleuTokenizer tok, std::string_view line);
// The name in signatures and on the command line: "none", "13a", "intl", "char".
std::string_view tokenizer_name(BleuTokenizer tok);
Result<BleuTokenizer> parse_tokenizer(std::string_view name);

}  // namespace gpstream::eval
