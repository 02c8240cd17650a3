#include "eval/unicode_text.h"

#include <utf8proc.h>

#include "tokenizer/unicode.h"

namespace gpstream::eval {

namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: bad byte b → U+DC00 + b (b >= 0x80)

// Decodes one code point at s[i]; returns its byte length (>= 1).
uint32_t decode_one(std::string_view s, size_t i, char32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  uint32_t need = 0;
  char32_t v = 0;
  char32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1, v = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2, v = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3, v = b0 & 0x07, min = 0x10000;
  } else {
    *cp = kEscapeBase + b0;
    return 1;
  }
  if (i + need >= s.size()) {
    *cp = kEscapeBase + b0;
    return 1;
  }
  for (uint32_t k = 1; k <= need; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      *cp = kEscapeBase + b0;
      return 1;
    }
    v = (v << 6) | (b & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *cp = kEscapeBase + b0;
    return 1;
  }
  *cp = v;
  return need + 1;
}

bool is_escaped_byte(char32_t cp) {
  return cp >= kEscapeBase + 0x80 && cp <= kEscapeBase + 0xFF;
}

utf8proc_category_t category(char32_t cp) {
  if (cp > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

bool is_cased(char32_t cp) {
  const auto c = category(cp);
  if (c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT) return true;
  const auto i = static_cast<utf8proc_int32_t>(cp);
  return utf8proc_tolower(i) != i || utf8proc_toupper(i) != i;
}

bool is_case_ignorable(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  // Word_Break MidLetter / MidNumLet / Single_Quote.
  switch (cp) {
    case U'\'':
    case U'.':
    case U':':
    case 0x00B7:
    case 0x0387:
    case 0x05F4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFE13:
    case 0xFE52:
    case 0xFE55:
    case 0xFF07:
    case 0xFF0E:
    case 0xFF1A:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<CodePoint> decode_utf8(std::string_view s) {
  std::vector<CodePoint> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    const uint32_t n = decode_one(s, i, &cp);
    out.push_back({cp, static_cast<uint32_t>(i), n});
    i += n;
  }
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    i += decode_one(s, i, &cp);
    ++n;
  }
  return n;
}

void append_utf8(std::string& out, char32_t cp) {
  if (is_escaped_byte(cp)) {
    out.push_back(static_cast<char>(cp - kEscapeBase));
  } else {
    tokenizer::append_utf8(out, cp);
  }
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    i += decode_one(s, i, &cp);
    if (is_escaped_byte(cp)) return false;
  }
  return true;
}

bool is_python_space(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

void python_split_into(std::string_view s, std::vector<std::string_view>& out) {
  size_t i = 0;
  size_t start = 0;
  bool in_word = false;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    char32_t cp = b;
    uint32_t n = 1;
    if (b >= 0x80) n = decode_one(s, i, &cp);
    const bool space =
        b < 0x80 ? (b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F)) : is_python_space(cp);
    if (space) {
      if (in_word) out.push_back(s.substr(start, i - start));
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      start = i;
    }
    i += n;
  }
  if (in_word) out.push_back(s.substr(start));
}

std::vector<std::string_view> python_split(std::string_view s) {
  std::vector<std::string_view> out;
  python_split_into(s, out);
  return out;
}

std::string python_normalize_spaces(std::string_view s) {
  thread_local std::vector<std::string_view> words;
  words.clear();
  python_split_into(s, words);
  std::string out;
  out.reserve(s.size());
  for (auto w : words) {
    if (!out.empty()) out.push_back(' ');
    out.append(w);
  }
  return out;
}

std::string_view python_rstrip(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    const auto b = static_cast<unsigned char>(s[end - 1]);
    if (b < 0x80) {
      if (!is_python_space(b)) break;
      --end;
      continue;
    }
    // Back up to the lead byte of the last code point (at most 4 bytes).
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    char32_t cp;
    const uint32_t n = decode_one(s, start, &cp);
    if (start + n != end || !is_python_space(cp)) break;
    end = start;
  }
  return s.substr(0, end);
}

std::string_view python_strip(std::string_view s) {
  const auto cps = decode_utf8(s);
  size_t begin = 0;
  size_t end = cps.size();
  while (begin < end && is_python_space(cps[begin].cp)) ++begin;
  while (end > begin && is_python_space(cps[end - 1].cp)) --end;
  if (begin == end) return s.substr(0, 0);
  const size_t b = cps[begin].offset;
  return s.substr(b, cps[end - 1].offset + cps[end - 1].length - b);
}

std::string python_lower(std::string_view s) {
  const auto cps = decode_utf8(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t cp = cps[i].cp;
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
      continue;
    }
    if (is_escaped_byte(cp)) {
      append_utf8(out, cp);
      continue;
    }
    if (cp == 0x0130) {  // SpecialCasing: LATIN CAPITAL LETTER I WITH DOT ABOVE → i + COMBINING DOT ABOVE
      out.append("i\xCC\x87");
      continue;
    }
    if (cp == 0x03A3) {  // Final_Sigma (Unicode 3.13, as CPython's handle_capital_sigma)
      size_t j = i;
      bool before = false;
      while (j > 0) {
        --j;
        if (is_case_ignorable(cps[j].cp)) continue;
        before = is_cased(cps[j].cp);
        break;
      }
      bool after = false;
      for (size_t k = i + 1; k < cps.size(); ++k) {
        if (is_case_ignorable(cps[k].cp)) continue;
        after = is_cased(cps[k].cp);
        break;
      }
      append_utf8(out, before && !after ? 0x03C2 : 0x03C3);
      continue;
    }
    append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

bool is_unicode_punctuation(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool is_unicode_symbol(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      return true;
    default:
      return false;
  }
}

bool is_unicode_number(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

const char* unicode_version() {
  return utf8proc_unicode_version();
}

}  // namespace gpstream::eval
