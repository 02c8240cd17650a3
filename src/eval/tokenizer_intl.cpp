// sacreBLEU `TokenizerV14International` (mteval-v14.pl --international-tokenization; metrics.md
// B.1). Three `regex.sub` scans over code points, then whitespace normalisation:
//   (\P{N})(\p{P}) → '\1 \2 ';  (\p{P})(\P{N}) → ' \1 \2';  (\p{S}) → ' \1 '.
// No padding, so a sentence-final "2019." stays joined (as in mteval-v14). General categories come
// from libutf8proc (see unicode_text.h for the Unicode version).
#include "eval/tokenizers.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {

namespace {

void append_cp(std::string& out, std::string_view src, const CodePoint& c) {
  out.append(src.substr(c.offset, c.length));
}

}  // namespace

std::string tokenize_intl(std::string_view line) {
  // Pass 1: (\P{N})(\p{P}) → '\1 \2 '.
  std::string a;
  {
    const auto cps = decode_utf8(line);
    a.reserve(line.size() + line.size() / 2);
    for (size_t i = 0; i < cps.size();) {
      if (i + 1 < cps.size() && !is_unicode_number(cps[i].cp) && is_unicode_punctuation(cps[i + 1].cp)) {
        append_cp(a, line, cps[i]);
        a.push_back(' ');
        append_cp(a, line, cps[i + 1]);
        a.push_back(' ');
        i += 2;
      } else {
        append_cp(a, line, cps[i]);
        ++i;
      }
    }
  }
  // Pass 2: (\p{P})(\P{N}) → ' \1 \2'.
  std::string b;
  {
    const auto cps = decode_utf8(a);
    b.reserve(a.size() + a.size() / 2);
    for (size_t i = 0; i < cps.size();) {
      if (i + 1 < cps.size() && is_unicode_punctuation(cps[i].cp) && !is_unicode_number(cps[i + 1].cp)) {
        b.push_back(' ');
        append_cp(b, a, cps[i]);
        b.push_back(' ');
        append_cp(b, a, cps[i + 1]);
        i += 2;
      } else {
        append_cp(b, a, cps[i]);
        ++i;
      }
    }
  }
  // Pass 3: (\p{S}) → ' \1 '.
  std::string c;
  {
    const auto cps = decode_utf8(b);
    c.reserve(b.size() + b.size() / 2);
    for (const auto& cp : cps) {
      if (is_unicode_symbol(cp.cp)) {
        c.push_back(' ');
        append_cp(c, b, cp);
        c.push_back(' ');
      } else {
        append_cp(c, b, cp);
      }
    }
  }
  return python_normalize_spaces(c);
}

}  // namespace gpstream::eval
