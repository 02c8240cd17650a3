// Display width and word wrapping of UTF-8 text (text_wrap.h).
#include "util/text_wrap.h"

#include <utf8proc.h>

#include <algorithm>

namespace gpstream::util {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes the code point that starts at s[i] and moves i past it. A byte that does not start a valid UTF-8
// sequence (a stray continuation byte, a truncated or overlong sequence, a surrogate, a value above U+10FFFF)
// decodes to U+FFFD and is skipped alone, so the next byte starts afresh.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if (b0 < 0x80) {
    ++i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++i;
    return kReplacement;
  }
  if (i + len > s.size()) {
    ++i;
    return kReplacement;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kReplacement;
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool is_control(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F);
}

// Appends sanitized text to rows.back() character by character, starting a new row whenever the next
// character with a width would pass `width` (a row that holds no column yet takes any character).
void append_cut(std::vector<TextRow>& rows, std::string_view clean, size_t width) {
  for (size_t i = 0; i < clean.size();) {
    const size_t start = i;
    const size_t w = char_width(next_code_point(clean, i));
    if (w > 0 && rows.back().width > 0 && rows.back().width + w > width) rows.emplace_back();
    rows.back().text.append(clean.substr(start, i - start));
    rows.back().width += w;
  }
}

}  // namespace

size_t char_width(char32_t c) {
  const int w = utf8proc_charwidth(static_cast<utf8proc_int32_t>(c));
  return w > 0 ? static_cast<size_t>(w) : 0;
}

std::string sanitize_for_terminal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t c = next_code_point(s, i);
    append_utf8(out, is_control(c) ? kReplacement : c);
  }
  return out;
}

size_t display_width(std::string_view s) {
  const std::string clean = sanitize_for_terminal(s);
  size_t w = 0;
  for (size_t i = 0; i < clean.size();) w += char_width(next_code_point(clean, i));
  return w;
}

std::vector<TextRow> wrap_text(std::string_view text, size_t width) {
  const std::string clean = sanitize_for_terminal(text);
  std::vector<TextRow> rows(1);
  for (size_t pos = 0; pos < clean.size();) {
    const size_t end = std::min(clean.find(' ', pos), clean.size());
    const std::string_view word = std::string_view(clean).substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const size_t word_width = display_width(word);
    if (!rows.back().text.empty()) {
      if (rows.back().width + 1 + word_width <= width) {
        rows.back().text += ' ';
        rows.back().text += word;
        rows.back().width += 1 + word_width;
        continue;
      }
      rows.emplace_back();
    }
    append_cut(rows, word, width);
  }
  return rows;
}

size_t reflowed_rows(std::span<const TextRow> rows, size_t width) {
  size_t n = 0;
  for (const TextRow& row : rows) {
    std::vector<TextRow> cut(1);
    append_cut(cut, row.text, width);
    n += cut.size();
  }
  return n;
}

}  // namespace gpstream::util
