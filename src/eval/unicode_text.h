// Python-compatible text primitives for the metrics: sacreBLEU and SimulEval operate on Python
// `str` (Unicode code points), so splitting, stripping, lowercasing and the intl tokenizer's
// Unicode general categories are reproduced here over UTF-8. Categories and case mappings come
// from libutf8proc (utf8proc_unicode_version(); Unicode 15.0 for Debian 12's 2.8.0).
// Invalid UTF-8 never fails: each bad byte becomes one code point in U+DC80..U+DCFF (Python's
// surrogateescape), category Cs, and is copied back out unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream::eval {

// One decoded code point and the byte range it came from.
struct CodePoint {
  char32_t cp;
  uint32_t offset;  // byte offset in the source string
  uint32_t length;  // bytes (1..4)
};

// Decodes UTF-8 (see the header comment for invalid bytes).
std::vector<CodePoint> decode_utf8(std::string_view s);
// Number of code points (Python len()).
size_t utf8_length(std::string_view s);
// Appends the UTF-8 encoding of cp (surrogate-escaped bytes are written back as the raw byte).
void append_utf8(std::string& out, char32_t cp);
// True if s is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

// Python str.isspace() for one code point (the separators of str.split() / str.strip()).
bool is_python_space(char32_t cp);
// Python `s.split()`: runs of whitespace separate, no empty items.
std::vector<std::string_view> python_split(std::string_view s);
// Appends the items of `s.split()` to out (no allocation beyond out's growth).
void python_split_into(std::string_view s, std::vector<std::string_view>& out);
// Python `' '.join(s.split())`.
std::string python_normalize_spaces(std::string_view s);
// Python `s.strip()` / `s.rstrip()` (whitespace as above).
std::string_view python_strip(std::string_view s);
std::string_view python_rstrip(std::string_view s);
// Python `s.lower()`: simple lowercase mappings plus U+0130 → "i̇" and the Final_Sigma rule.
std::string python_lower(std::string_view s);

// Unicode general-category classes used by the intl tokenizer (regex \p{P}, \p{S}, \p{N}).
bool is_unicode_punctuation(char32_t cp);  // Pc Pd Ps Pe Pi Pf Po
bool is_unicode_symbol(char32_t cp);       // Sm Sc Sk So
bool is_unicode_number(char32_t cp);       // Nd Nl No
// The Unicode version of the category tables in use (from libutf8proc).
const char* unicode_version();

}  // namespace gpstream::eval
