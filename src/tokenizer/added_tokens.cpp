#include "tokenizer/added_tokens.h"

#include <utf8proc.h>

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

namespace {
// Rust regex \w (Unicode): alphabetic, marks, decimal digits, connector punctuation, joiners.
bool is_word_char(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  return is_letter_mark_or_digit(c) ||
         (c <= 0x10FFFF && utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_PC);
}

char32_t last_char(std::string_view s, size_t end) {
  size_t k = end - 1;
  while (k > 0 && (static_cast<uint8_t>(s[k]) & 0xC0) == 0x80) --k;
  return next_code_point(s, k);
}

// Start of the run of whitespace that ends at `end`.
size_t whitespace_before(std::string_view s, size_t end) {
  while (end > 0) {
    size_t k = end - 1;
    while (k > 0 && (static_cast<uint8_t>(s[k]) & 0xC0) == 0x80) --k;
    size_t i = k;
    if (!is_unicode_whitespace(next_code_point(s, i))) break;
    end = k;
  }
  return end;
}

size_t whitespace_after(std::string_view s, size_t begin) {
  while (begin < s.size()) {
    size_t i = begin;
    if (!is_unicode_whitespace(next_code_point(s, i))) break;
    begin = i;
  }
  return begin;
}
}  // namespace

void AddedTokenMatcher::build(const std::vector<const AddedToken*>& tokens,
                              const std::vector<std::string>& patterns) {
  nodes_.assign(1, Node{});
  tokens_ = tokens;
  patterns_ = 0;
  for (auto& f : first_byte_) f = false;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::string& p = patterns[t];
    if (p.empty()) continue;
    int32_t node = 0;
    for (char ch : p) {
      auto b = static_cast<uint8_t>(ch);
      int32_t next = child(node, b);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_[node].children.emplace_back(b, next);
        nodes_.emplace_back();
      }
      node = next;
    }
    if (nodes_[node].token < 0) nodes_[node].token = static_cast<int32_t>(t);  // first pattern wins
    first_byte_[static_cast<uint8_t>(p[0])] = true;
    ++patterns_;
  }
}

int32_t AddedTokenMatcher::child(int32_t node, uint8_t b) const {
  for (const auto& [c, n] : nodes_[node].children) {
    if (c == b) return n;
  }
  return -1;
}

void AddedTokenMatcher::split(std::string_view s, std::vector<Split>& out) const {
  if (s.empty()) {
    out.push_back({0, 0, -1});
    return;
  }
  size_t start_offset = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    if (!first_byte_[static_cast<uint8_t>(s[pos])]) {
      ++pos;
      continue;
    }
    // Longest pattern starting at pos.
    int32_t node = 0, best = -1;
    size_t best_end = 0;
    for (size_t i = pos; i < s.size(); ++i) {
      node = child(node, static_cast<uint8_t>(s[i]));
      if (node < 0) break;
      if (nodes_[node].token >= 0) {
        best = nodes_[node].token;
        best_end = i + 1;
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = *tokens_[best];
    size_t start = pos, stop = best_end;
    pos = best_end;  // the search goes on after the match, whatever the filters decide
    if (tok.single_word) {
      bool start_space = start == 0 || !is_word_char(last_char(s, start));
      size_t i = stop;
      bool stop_space = stop == s.size() || !is_word_char(next_code_point(s, i));
      if (!start_space || !stop_space) continue;
    }
    if (tok.lstrip) start = std::max(whitespace_before(s, start), start_offset);
    if (tok.rstrip) stop = whitespace_after(s, stop);
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, tok.id});
    start_offset = stop;
  }
  if (start_offset != s.size()) out.push_back({start_offset, s.size(), -1});
}

void AddedVocabulary::set(std::vector<AddedToken> tokens, const Normalizer* normalizer) {
  tokens_ = std::move(tokens);
  // Hugging Face matches special tokens first, then the others, each in file order; with
  // leftmost-longest matching the order only matters for identical contents.
  std::vector<const AddedToken*> raw, norm;
  std::vector<std::string> raw_p, norm_p;
  for (int pass = 0; pass < 2; ++pass) {
    for (const AddedToken& t : tokens_) {
      if (t.special != (pass == 0)) continue;
      if (t.normalized) {
        std::string p = t.content;
        if (normalizer) normalizer->apply(p, true);
        norm.push_back(&t);
        norm_p.push_back(std::move(p));
      } else {
        raw.push_back(&t);
        raw_p.push_back(t.content);
      }
    }
  }
  raw_.build(raw, raw_p);
  normalized_.build(norm, norm_p);
}

void AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer, bool prefix,
                                            std::vector<Segment>& out) const {
  thread_local std::vector<AddedTokenMatcher::Split> splits, inner;
  splits.clear();
  if (raw_.empty()) {
    splits.push_back({0, text.size(), -1});
  } else {
    raw_.split(text, splits);
  }
  for (const auto& sp : splits) {
    if (sp.id >= 0) {
      out.push_back({sp.id, std::string(), false});
      continue;
    }
    std::string piece(text.substr(sp.begin, sp.end - sp.begin));
    if (normalizer) normalizer->apply(piece, prefix);
    bool at_start = sp.begin == 0;
    if (normalized_.empty()) {
      out.push_back({-1, std::move(piece), at_start});
      continue;
    }
    inner.clear();
    normalized_.split(piece, inner);
    for (const auto& in : inner) {
      if (in.id >= 0) {
        out.push_back({in.id, std::string(), false});
      } else {
        out.push_back({-1, piece.substr(in.begin, in.end - in.begin), at_start && in.begin == 0});
      }
    }
  }
}

}  // namespace gpstream::tokenizer
