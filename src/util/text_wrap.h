// Text layout for a terminal: the display width of UTF-8 text (one column per code point, two for wide East
// Asian characters, none for combining marks) and word wrapping into rows of a given width — breaking at
// spaces and cutting words longer than a row — so that a caller knows exactly where every row breaks instead
// of relying on the terminal's auto-wrap; and how many rows those rows take once a terminal of another width
// has re-flowed them. Pure functions: no escape sequences, no terminal.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream::util {

// One row of wrapped text and its display width in columns.
struct TextRow {
  std::string text;
  size_t width = 0;
};

// Columns a code point takes on a terminal: 0 for combining marks and other zero-width characters, 2 for wide
// and fullwidth East Asian characters (and emoji shown as such), 1 otherwise.
size_t char_width(char32_t c);

// The display width of UTF-8 text, after sanitize_for_terminal.
size_t display_width(std::string_view s);

// The text with every control character (C0, DEL, C1) and every byte that is not valid UTF-8 replaced by
// U+FFFD, which takes one column: what is left cannot move a terminal's cursor.
std::string sanitize_for_terminal(std::string_view s);

// Wraps text (sanitized first) into rows of at most `width` columns (width >= 1). Words are the runs between
// spaces; consecutive spaces count as one, and leading and trailing spaces are dropped. A row holds as many
// words as fit, one space apart; a word wider than a row starts a row of its own and is cut at code point
// boundaries, every row filled as far as it goes (a wide character that does not fit in the last column
// moves to the next row, a zero-width one stays with the character before it). A character wider than the
// row itself (a wide one when width is 1) gets a row alone, which is then wider than `width`. Empty text is
// one empty row: every line takes a row on screen.
std::vector<TextRow> wrap_text(std::string_view text, size_t width);

// The rows that lines (each ended by a newline) take on a terminal that is `width` columns wide and re-flows
// lines wider than itself, as most terminals do on resize and every one does on output: each line is cut
// character by character like wrap_text cuts a long word, and an empty line is one row. With width at least
// every line's width, that is rows.size().
size_t reflowed_rows(std::span<const TextRow> rows, size_t width);

}  // namespace gpstream::util
