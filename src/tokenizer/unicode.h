// UTF-8 helpers for the tokenizer: decoding one code point, validating and repairing byte strings
// (invalid sequences become U+FFFD exactly as a WHATWG/Rust lossy decoder does: one replacement per
// maximal ill-formed subpart), the GPT-2 byte<->char table of byte-level BPE, and the length of the
// longest complete UTF-8 prefix (for streaming), and the letter/mark/digit test that word-character classes
// share. No normalization here (see normalizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpstream::tokenizer {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Appends the UTF-8 encoding of `cp` to `out`.
void append_utf8(std::string& out, char32_t cp);

// Decodes the code point at s[i] (which must start a valid sequence) and advances i.
char32_t next_code_point(std::string_view s, size_t& i);

// Length in bytes of the valid UTF-8 sequence starting at s[i], or 0 if it is ill-formed or cut short.
size_t valid_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// Whether `cp` is a letter (Lu, Ll, Lt, Lm, Lo), a mark (Mn, Mc, Me), a decimal digit (Nd) or a letter number
// (Nl): the Unicode categories that every "word character" class here starts from (regex \w adds connector
// punctuation and the joiners, WER's words other numbers). False beyond U+10FFFF.
bool is_letter_mark_or_digit(char32_t cp);

// Replaces every maximal ill-formed subpart by U+FFFD (Unicode §3.9 best practice, as WHATWG and
// Rust's String::from_utf8_lossy do). Valid input is returned unchanged.
std::string sanitize_utf8(std::string_view s);

// Length of the longest prefix of `s` that does not end inside a UTF-8 sequence that could still be
// completed by more bytes. Ill-formed bytes count as complete (they can never become valid).
size_t complete_utf8_prefix(std::string_view s);

// Byte-level BPE (GPT-2): every byte maps to one printable code point; 0x20 (space) maps to U+0120 'Ġ'.
char32_t byte_to_char(uint8_t b);
// The byte a byte-level char stands for, or -1 if `cp` is not one of the 256 chars.
int char_to_byte(char32_t cp);
// The UTF-8 encoding of byte_to_char(b), precomputed.
const std::string& byte_char_utf8(uint8_t b);

// Unicode White_Space property (as Rust's char::is_whitespace).
bool is_unicode_whitespace(char32_t cp);

}  // namespace gpstream::tokenizer
