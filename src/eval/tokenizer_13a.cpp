// sacreBLEU `Tokenizer13a` (mteval-v13a.pl's tokenization; metrics.md B.1). The Python code applies
// four `re.sub` passes, each a left-to-right scan that never re-reads a replaced match; the passes
// below are those scans written out by hand (10x faster than a regex engine, needed for the
// 100k-sentence benchmark). The patterns only test ASCII characters on the matched side and "any
// other character" on the other, so scanning bytes gives the same result as scanning code points.
#include "eval/tokenizers.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {

namespace {

// Python str.replace(from, to): non-overlapping, left to right.
void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = s.find(from);
  if (pos == std::string::npos) return;
  std::string out;
  out.reserve(s.size());
  size_t last = 0;
  while (pos != std::string::npos) {
    out.append(s, last, pos - last);
    out.append(to);
    last = pos + from.size();
    pos = s.find(from, last);
  }
  out.append(s, last, std::string::npos);
  s.swap(out);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// `([\{-\~\[-\` -\&\(-\+\:-\@\/])`: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
bool is_13a_symbol(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= '{' && u <= '~') || (u >= '[' && u <= '`') || (u >= ' ' && u <= '&') ||
         (u >= '(' && u <= '+') || (u >= ':' && u <= '@') || u == '/';
}

}  // namespace

std::string tokenize_13a(std::string_view input) {
  thread_local std::string line, a, b, c, d;
  line.assign(input);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }

  // Pass 1 (on " line "): ' \1 ' around every symbol of the set. The padding spaces are in the
  // set themselves, so " line " becomes "   " + ... + "   ".
  a.clear();
  a.reserve(line.size() * 2 + 8);
  a.append("   ");
  {
    size_t run = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (is_13a_symbol(line[i])) {
        a.append(line, run, i - run);
        a.push_back(' ');
        a.push_back(line[i]);
        a.push_back(' ');
        run = i + 1;
      }
    }
    a.append(line, run, std::string::npos);
  }
  a.append("   ");

  // Pass 2: `([^0-9])([\.,])` → '\1 \2 '. Only positions before a '.' or ',' can match; the scan
  // never re-reads a replaced pair, so a '.' consumed as \2 cannot start the next match as \1.
  b.clear();
  b.reserve(a.size() + a.size() / 4);
  {
    size_t run = 0;
    size_t i = 0;
    while (i + 1 < a.size()) {
      const char n = a[i + 1];
      if ((n == '.' || n == ',') && !is_digit(a[i])) {
        b.append(a, run, i + 1 - run);
        b.push_back(' ');
        b.push_back(n);
        b.push_back(' ');
        i += 2;
        run = i;
      } else {
        ++i;
      }
    }
    b.append(a, run, std::string::npos);
  }

  // Pass 3: `([\.,])([^0-9])` → ' \1 \2'.
  c.clear();
  c.reserve(b.size() + b.size() / 4);
  {
    size_t run = 0;
    size_t i = 0;
    while (i + 1 < b.size()) {
      const char p = b[i];
      if ((p == '.' || p == ',') && !is_digit(b[i + 1])) {
        c.append(b, run, i - run);
        c.push_back(' ');
        c.push_back(p);
        c.push_back(' ');
        c.push_back(b[i + 1]);
        i += 2;
        run = i;
      } else {
        ++i;
      }
    }
    c.append(b, run, std::string::npos);
  }

  // Pass 4: `([0-9])(-)` → '\1 \2 '.
  d.clear();
  d.reserve(c.size() + 8);
  {
    size_t run = 0;
    size_t i = 0;
    while (i + 1 < c.size()) {
      if (c[i + 1] == '-' && is_digit(c[i])) {
        d.append(c, run, i + 1 - run);
        d.append(" - ");
        i += 2;
        run = i;
      } else {
        ++i;
      }
    }
    d.append(c, run, std::string::npos);
  }
  return python_normalize_spaces(d);
}

}  // namespace gpstream::eval
