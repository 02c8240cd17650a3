#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

namespace {
bool is_ascii(const std::string& s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

void replace_all(std::string& s, const Pattern& pattern, const std::string& with) {
  std::vector<Span> m;
  pattern.find_all(s, m);
  if (m.empty()) return;
  std::string out;
  out.reserve(s.size() + m.size() * with.size());
  size_t prev = 0;
  for (auto [b, e] : m) {
    out.append(s, prev, b - prev);
    out += with;
    prev = e;
  }
  out.append(s, prev, std::string::npos);
  s = std::move(out);
}

std::string lowercase(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = next_code_point(s, i);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    } else if (cp == 0x130) {  // Rust's full lowercase mapping: İ → i + combining dot above
      out += "i\xCC\x87";
    } else {
      append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }
  return out;
}

std::string strip_accents(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    char32_t cp = next_code_point(s, i);
    auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));  // any mark: Mn, Mc, Me
    if (cat != UTF8PROC_CATEGORY_MN && cat != UTF8PROC_CATEGORY_MC && cat != UTF8PROC_CATEGORY_ME) {
      out.append(s, start, i - start);
    }
  }
  return out;
}

std::string strip(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e) {
      size_t i = b;
      if (!is_unicode_whitespace(next_code_point(s, i))) break;
      b = i;
    }
  }
  if (right) {
    while (e > b) {
      size_t k = e - 1;
      while (k > b && (static_cast<uint8_t>(s[k]) & 0xC0) == 0x80) --k;
      size_t i = k;
      if (!is_unicode_whitespace(next_code_point(s, i))) break;
      e = k;
    }
  }
  return s.substr(b, e - b);
}
}  // namespace

std::string unicode_normalize(const std::string& s, bool compose, bool compat) {
  if (is_ascii(s)) return s;
  int options =
      UTF8PROC_STABLE | (compose ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE) | (compat ? UTF8PROC_COMPAT : 0);
  utf8proc_uint8_t* dst = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                   static_cast<utf8proc_ssize_t>(s.size()), &dst, static_cast<utf8proc_option_t>(options));
  if (n < 0) return s;  // only on invalid UTF-8, which the tokenizer has already repaired
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

std::string unicode_nfc(const std::string& s) {
  return unicode_normalize(s, true, false);
}

Result<Normalizer> Normalizer::from_json(const Json& j, const std::string& where) {
  std::string path = where;
  return parse(j, path, 1);
}

Result<Normalizer> Normalizer::parse(const Json& j, std::string& where, int depth) {
  GPS_ASSIGN(JsonReader r, open_section(j, where));
  std::string type;
  GPS_TRY(r.required("type", type));
  Normalizer n;
  if (type == "NFC") {
    n.kind = Kind::Nfc;
  } else if (type == "NFD") {
    n.kind = Kind::Nfd;
  } else if (type == "NFKC") {
    n.kind = Kind::Nfkc;
  } else if (type == "NFKD") {
    n.kind = Kind::Nfkd;
  } else if (type == "Lowercase") {
    n.kind = Kind::Lowercase;
  } else if (type == "StripAccents") {
    n.kind = Kind::StripAccents;
  } else if (type == "Prepend") {
    n.kind = Kind::Prepend;
    GPS_TRY(r.required("prepend", n.text));
  } else if (type == "Strip") {
    n.kind = Kind::Strip;
    n.strip_left = n.strip_right = true;
    GPS_TRY(r.optional("strip_left", n.strip_left));
    GPS_TRY(r.optional("strip_right", n.strip_right));
  } else if (type == "Replace") {
    n.kind = Kind::Replace;
    GPS_TRY(r.required("content", n.text));
    GPS_ASSIGN(n.pattern, read_pattern(r, "pattern"));
  } else if (type == "Sequence") {
    n.kind = Kind::Sequence;
    GPS_ASSIGN(JsonValue list, r.require("normalizers"));
    GPS_ASSIGN(std::vector<JsonValue> steps, list.elements(kMaxSequenceSteps));
    if (!steps.empty() && depth >= kMaxSectionDepth) return section_depth_error(where);
    const size_t base = where.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      append_step(where, "normalizers", i);
      GPS_ASSIGN(Normalizer child, parse(steps[i].json(), where, depth + 1));
      where.resize(base);
      n.children.push_back(std::move(child));
    }
  } else {
    return unsupported(where + ": unsupported normalizer type \"" + type + "\"");
  }
  return n;
}

void Normalizer::apply(std::string& s, bool prefix) const {
  switch (kind) {
    case Kind::Nfc:
      s = unicode_normalize(s, true, false);
      break;
    case Kind::Nfd:
      s = unicode_normalize(s, false, false);
      break;
    case Kind::Nfkc:
      s = unicode_normalize(s, true, true);
      break;
    case Kind::Nfkd:
      s = unicode_normalize(s, false, true);
      break;
    case Kind::Lowercase:
      s = lowercase(s);
      break;
    case Kind::StripAccents:
      s = strip_accents(s);
      break;
    case Kind::Strip:
      s = strip(s, strip_left, strip_right);
      break;
    case Kind::Prepend:
      if (prefix && !s.empty()) s.insert(0, text);
      break;
    case Kind::Replace:
      replace_all(s, pattern, text);
      break;
    case Kind::Sequence:
      for (const auto& c : children) c.apply(s, prefix);
      break;
  }
}

bool Normalizer::has_prepend() const {
  if (kind == Kind::Prepend) return true;
  for (const auto& c : children) {
    if (c.has_prepend()) return true;
  }
  return false;
}

}  // namespace gpstream::tokenizer
