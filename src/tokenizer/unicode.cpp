#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <array>

namespace gpstream::tokenizer {

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t next_code_point(std::string_view s, size_t& i) {
  auto b = static_cast<uint8_t>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
  char32_t cp = b & (0x7F >> n);
  for (size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

// Per Unicode Table 3-7 (well-formed UTF-8 byte sequences). Returns the number of bytes of the
// maximal prefix that is still well formed (`complete` tells whether it is a whole sequence).
static size_t well_formed_prefix(std::string_view s, size_t i, bool& complete) {
  auto b0 = static_cast<uint8_t>(s[i]);
  complete = false;
  if (b0 < 0x80) {
    complete = true;
    return 1;
  }
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;  // continuation byte, C0, C1 or F5..FF: never starts a sequence
  }
  size_t k = 1;
  for (; k < need; ++k) {
    if (i + k >= s.size()) return k;
    auto b = static_cast<uint8_t>(s[i + k]);
    uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return k;
  }
  complete = true;
  return need;
}

size_t valid_sequence_length(std::string_view s, size_t i) {
  bool complete;
  size_t n = well_formed_prefix(s, i, complete);
  return complete ? n : 0;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = valid_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    bool complete;
    size_t n = well_formed_prefix(s, i, complete);
    if (complete) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      append_utf8(out, kReplacementChar);
      i += n == 0 ? 1 : n;  // a maximal ill-formed subpart is replaced by one U+FFFD
    }
  }
  return out;
}

size_t complete_utf8_prefix(std::string_view s) {
  // Only the last (up to 3) bytes can start an incomplete sequence.
  size_t start = s.size() > 3 ? s.size() - 3 : 0;
  for (size_t i = start; i < s.size(); ++i) {
    auto b = static_cast<uint8_t>(s[i]);
    if (b < 0xC0) continue;  // ASCII or continuation: cannot start a multi-byte sequence
    bool complete;
    size_t n = well_formed_prefix(s, i, complete);
    if (!complete && i + n == s.size()) return i;  // well formed so far, cut short by the end
  }
  return s.size();
}

namespace {
struct ByteTables {
  std::array<char32_t, 256> to_char{};
  std::array<std::string, 256> to_utf8;
  std::array<int16_t, 256 + 68> from_char{};
  ByteTables() {
    from_char.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      append_utf8(to_utf8[b], to_char[b]);
      from_char[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteTables& byte_tables() {
  static const ByteTables t;
  return t;
}
}  // namespace

char32_t byte_to_char(uint8_t b) {
  return byte_tables().to_char[b];
}

int char_to_byte(char32_t cp) {
  return cp < 256 + 68 ? byte_tables().from_char[cp] : -1;
}

const std::string& byte_char_utf8(uint8_t b) {
  return byte_tables().to_utf8[b];
}

bool is_unicode_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_letter_mark_or_digit(char32_t cp) {
  if (cp > 0x10FFFF) return false;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
      return true;
    default:
      return false;
  }
}

}  // namespace gpstream::tokenizer
