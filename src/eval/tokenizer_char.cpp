// sacreBLEU `TokenizerChar`: `" ".join(char for char in line)` — every code point separated by one
// space (whitespace code points included, so they vanish when BLEU splits the result).
#include "eval/tokenizers.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {

std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  bool first = true;
  for (const auto& c : decode_utf8(line)) {
    if (!first) out.push_back(' ');
    first = false;
    out.append(line.substr(c.offset, c.length));
  }
  return out;
}

}  // namespace gpstream::eval
