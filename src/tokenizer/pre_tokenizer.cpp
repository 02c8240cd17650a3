#include "tokenizer/pre_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

const char* const kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

Result<SplitBehavior> parse_behavior(JsonReader& r) {
  std::string b;
  GPS_TRY(r.required("behavior", b));
  if (b == "Removed") return SplitBehavior::Removed;
  if (b == "Isolated") return SplitBehavior::Isolated;
  if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (b == "Contiguous") return SplitBehavior::Contiguous;
  return unsupported(r.key_path("behavior") + ": unsupported split behavior \"" + b + "\"");
}

// A cut of one piece: [begin, end) and whether it is a delimiter match.
struct Cut {
  size_t begin, end;
  bool match;
};

// Turns matches into a full cover of [0, n) (as tokenizers' Pattern::find_matches does).
void cover(size_t n, const std::vector<Span>& matches, bool invert, std::vector<Cut>& cuts) {
  cuts.clear();
  if (n == 0) {
    cuts.push_back({0, 0, invert});
    return;
  }
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (b > prev) cuts.push_back({prev, b, invert});
    cuts.push_back({b, e, !invert});
    prev = e;
  }
  if (prev < n) cuts.push_back({prev, n, invert});
}

// Applies a split behavior to `cuts` and appends the resulting sub-pieces of `piece` to `out`.
void split_piece(const Piece& piece, std::vector<Cut>& cuts, SplitBehavior behavior,
                 std::vector<Piece>& out) {
  std::vector<Cut> merged;
  merged.reserve(cuts.size());
  bool prev_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
    case SplitBehavior::Removed:
      merged = cuts;
      break;
    case SplitBehavior::Contiguous:
      for (const Cut& c : cuts) {
        if (!merged.empty() && c.match == prev_match) {
          merged.back().end = c.end;
        } else {
          merged.push_back({c.begin, c.end, false});
        }
        prev_match = c.match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const Cut& c : cuts) {
        if (!merged.empty() && c.match && !prev_match) {
          merged.back().end = c.end;
        } else {
          merged.push_back({c.begin, c.end, false});
        }
        prev_match = c.match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
        if (!merged.empty() && it->match && !prev_match) {
          merged.back().begin = it->begin;
        } else {
          merged.push_back({it->begin, it->end, false});
        }
        prev_match = it->match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
  }
  for (const Cut& c : merged) {
    if (behavior == SplitBehavior::Removed && c.match) continue;
    if (c.end == c.begin) continue;
    out.push_back({piece.text.substr(c.begin, c.end - c.begin), piece.at_start && c.begin == 0});
  }
}

void split_all(std::vector<Piece>& pieces, const Pattern& pattern, SplitBehavior behavior, bool invert) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 4);
  std::vector<Span> matches;
  std::vector<Cut> cuts;
  for (const Piece& p : pieces) {
    pattern.find_all(p.text, matches);
    cover(p.text.size(), matches, invert, cuts);
    split_piece(p, cuts, behavior, out);
  }
  pieces = std::move(out);
}

// Splits each piece by a predicate over code points (WhitespaceSplit, Digits): every matching code
// point is one match, the runs between matches are non-matches.
template <typename Pred>
void split_by_char(std::vector<Piece>& pieces, Pred is_delim, SplitBehavior behavior) {
  std::vector<Piece> out;
  std::vector<Cut> cuts;
  for (const Piece& p : pieces) {
    cuts.clear();
    for (size_t i = 0; i < p.text.size();) {
      size_t b = i;
      bool d = is_delim(next_code_point(p.text, i));
      if (!d && !cuts.empty() && !cuts.back().match) {
        cuts.back().end = i;
      } else {
        cuts.push_back({b, i, d});
      }
    }
    if (cuts.empty()) cuts.push_back({0, 0, false});
    split_piece(p, cuts, behavior, out);
  }
  pieces = std::move(out);
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

}  // namespace

Result<PreTokenizer> PreTokenizer::from_json(const Json& j, const std::string& where) {
  std::string path = where;
  return parse(j, path, 1);
}

Result<PreTokenizer> PreTokenizer::parse(const Json& j, std::string& where, int depth) {
  GPS_ASSIGN(JsonReader r, open_section(j, where));
  std::string type;
  GPS_TRY(r.required("type", type));
  PreTokenizer p;
  if (type == "Split") {
    p.kind = Kind::Split;
    GPS_ASSIGN(p.behavior, parse_behavior(r));
    p.invert = false;
    GPS_TRY(r.optional("invert", p.invert));
    GPS_ASSIGN(p.pattern, read_pattern(r, "pattern"));
  } else if (type == "ByteLevel") {
    p.kind = Kind::ByteLevel;
    p.add_prefix_space = p.use_regex = true;
    GPS_TRY(r.optional("add_prefix_space", p.add_prefix_space));
    GPS_TRY(r.optional("use_regex", p.use_regex));
    if (p.use_regex) {
      GPS_ASSIGN(p.pattern, Pattern::regex(kGpt2Regex));
    }
  } else if (type == "Metaspace") {
    p.kind = Kind::Metaspace;
    GPS_TRY(r.required("replacement", p.replacement));
    size_t i = 0;
    if (p.replacement.empty() || (next_code_point(p.replacement, i), i != p.replacement.size())) {
      return format_error(where + ".replacement: expected one character");
    }
    p.split = true;
    GPS_TRY(r.optional("split", p.split));
    // prepend_scheme, when given, replaces the older add_prefix_space.
    bool legacy_prefix = true;
    GPS_TRY(r.optional("add_prefix_space", legacy_prefix));
    p.prepend = legacy_prefix ? Prepend::Always : Prepend::Never;
    if (auto scheme_value = r.find("prepend_scheme")) {
      GPS_ASSIGN(std::string scheme, scheme_value->string());
      if (scheme == "always") {
        p.prepend = Prepend::Always;
      } else if (scheme == "first") {
        p.prepend = Prepend::First;
      } else if (scheme == "never") {
        p.prepend = Prepend::Never;
      } else {
        return unsupported(where + ".prepend_scheme: unsupported value \"" + scheme + "\"");
      }
    }
  } else if (type == "Whitespace") {
    p.kind = Kind::Whitespace;
    GPS_ASSIGN(p.pattern, Pattern::regex(R"(\w+|[^\w\s]+)"));
  } else if (type == "WhitespaceSplit") {
    p.kind = Kind::WhitespaceSplit;
  } else if (type == "Digits") {
    p.kind = Kind::Digits;
    p.individual_digits = false;
    GPS_TRY(r.optional("individual_digits", p.individual_digits));
  } else if (type == "Sequence") {
    p.kind = Kind::Sequence;
    GPS_ASSIGN(JsonValue list, r.require("pretokenizers"));
    GPS_ASSIGN(std::vector<JsonValue> steps, list.elements(kMaxSequenceSteps));
    if (!steps.empty() && depth >= kMaxSectionDepth) return section_depth_error(where);
    const size_t base = where.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      append_step(where, "pretokenizers", i);
      GPS_ASSIGN(PreTokenizer child, parse(steps[i].json(), where, depth + 1));
      where.resize(base);
      p.children.push_back(std::move(child));
    }
  } else {
    return unsupported(where + ": unsupported pre-tokenizer type \"" + type + "\"");
  }
  return p;
}

void PreTokenizer::apply(std::vector<Piece>& pieces, bool prefix) const {
  switch (kind) {
    case Kind::Split:
      split_all(pieces, pattern, behavior, invert);
      break;
    case Kind::ByteLevel: {
      if (add_prefix_space && prefix) {
        for (Piece& p : pieces) {
          if (p.text.empty() || p.text[0] != ' ') p.text = std::string(1, ' ') + p.text;
        }
      }
      if (use_regex) split_all(pieces, pattern, SplitBehavior::Isolated, false);
      for (Piece& p : pieces) {
        std::string mapped;
        mapped.reserve(p.text.size() + p.text.size() / 2);
        for (char c : p.text) mapped += byte_char_utf8(static_cast<uint8_t>(c));
        p.text = std::move(mapped);
      }
      break;
    }
    case Kind::Metaspace: {
      for (Piece& p : pieces) {
        std::string t;
        t.reserve(p.text.size() + 8);
        for (char c : p.text) {
          if (c == ' ') {
            t += replacement;
          } else {
            t.push_back(c);
          }
        }
        bool starts = t.compare(0, replacement.size(), replacement) == 0;
        if (prefix && !starts && (prepend == Prepend::Always || (prepend == Prepend::First && p.at_start))) {
          t.insert(0, replacement);
        }
        p.text = std::move(t);
      }
      if (split) {
        Pattern lit = Pattern::literal(replacement).value();
        split_all(pieces, lit, SplitBehavior::MergedWithNext, false);
      }
      break;
    }
    case Kind::Whitespace:
      split_all(pieces, pattern, SplitBehavior::Removed, true);
      break;
    case Kind::WhitespaceSplit:
      split_by_char(pieces, is_unicode_whitespace, SplitBehavior::Removed);
      break;
    case Kind::Digits:
      split_by_char(pieces, is_numeric,
                    individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous);
      break;
    case Kind::Sequence:
      for (const auto& c : children) c.apply(pieces, prefix);
      break;
  }
}

bool PreTokenizer::is_byte_level() const {
  if (kind == Kind::ByteLevel) return true;
  for (const auto& c : children) {
    if (c.is_byte_level()) return true;
  }
  return false;
}

bool PreTokenizer::has_metaspace_prefix() const {
  if (kind == Kind::Metaspace) return prepend != Prepend::Never;
  for (const auto& c : children) {
    if (c.has_metaspace_prefix()) return true;
  }
  return false;
}

}  // namespace gpstream::tokenizer
