#include "tokenizer/decoder.h"

#include "tokenizer/unicode.h"

namespace gpstream::tokenizer {

namespace {
// "<0xAB>" -> 0xAB, or -1.
int byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    char c = t[k];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::string replace_all(const std::string& s, const Pattern& p, const std::string& with) {
  std::vector<Span> m;
  p.find_all(s, m);
  if (m.empty()) return s;
  std::string out;
  size_t prev = 0;
  for (auto [b, e] : m) {
    out.append(s, prev, b - prev);
    out += with;
    prev = e;
  }
  out.append(s, prev, std::string::npos);
  return out;
}

// Maps each char of a byte-level token back to its byte; a token with any other char is kept as is.
void byte_level_bytes(const std::string& t, std::string& out) {
  size_t start = out.size();
  for (size_t i = 0; i < t.size();) {
    int b = char_to_byte(next_code_point(t, i));
    if (b < 0) {
      out.resize(start);
      out += t;
      return;
    }
    out.push_back(static_cast<char>(b));
  }
}

std::string strip_chars(const std::string& t, char32_t c, size_t start, size_t stop) {
  std::vector<size_t> offs;  // byte offset of each char
  for (size_t i = 0; i < t.size();) {
    offs.push_back(i);
    next_code_point(t, i);
  }
  size_t n = offs.size();
  size_t start_cut = 0;
  for (size_t k = 0; k < std::min(start, n); ++k) {
    size_t i = offs[k];
    if (next_code_point(t, i) != c) break;
    start_cut = k + 1;
  }
  size_t stop_cut = n;
  for (size_t k = 0; k < stop && k < n; ++k) {
    size_t idx = n - k - 1;
    size_t i = offs[idx];
    if (next_code_point(t, i) != c) break;
    stop_cut = idx;
  }
  if (stop_cut <= start_cut) return std::string();
  size_t b = offs[start_cut], e = stop_cut < n ? offs[stop_cut] : t.size();
  return t.substr(b, e - b);
}
}  // namespace

Result<Decoder> Decoder::from_json(const Json& j, const std::string& where) {
  std::string path = where;
  return parse(j, path, 1);
}

Result<Decoder> Decoder::parse(const Json& j, std::string& where, int depth) {
  GPS_ASSIGN(JsonReader r, open_section(j, where));
  std::string type;
  GPS_TRY(r.required("type", type));
  Decoder d;
  if (type == "ByteLevel") {
    d.kind = Kind::ByteLevel;
  } else if (type == "ByteFallback") {
    d.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    d.kind = Kind::Fuse;
  } else if (type == "Replace") {
    d.kind = Kind::Replace;
    GPS_TRY(r.required("content", d.content));
    GPS_ASSIGN(d.pattern, read_pattern(r, "pattern"));
  } else if (type == "Strip") {
    d.kind = Kind::Strip;
    GPS_TRY(r.required("content", d.content));
    size_t i = 0;
    if (d.content.empty() || (next_code_point(d.content, i), i != d.content.size())) {
      return format_error(where + ".content: expected one character");
    }
    constexpr size_t kMaxStrip = (size_t{1} << 20) - 1;
    d.strip_start = d.strip_stop = 0;
    GPS_TRY(r.optional("start", d.strip_start, 0, kMaxStrip));
    GPS_TRY(r.optional("stop", d.strip_stop, 0, kMaxStrip));
  } else if (type == "Metaspace") {
    d.kind = Kind::Metaspace;
    GPS_TRY(r.required("replacement", d.content));
    size_t i = 0;
    if (d.content.empty() || (next_code_point(d.content, i), i != d.content.size())) {
      return format_error(where + ".replacement: expected one character");
    }
    // prepend_scheme, when given, replaces the older add_prefix_space.
    d.metaspace_prefix = true;
    GPS_TRY(r.optional("add_prefix_space", d.metaspace_prefix));
    if (auto scheme = r.find("prepend_scheme")) {
      GPS_ASSIGN(std::string name, scheme->string());
      d.metaspace_prefix = name != "never";
    }
  } else if (type == "Sequence") {
    d.kind = Kind::Sequence;
    GPS_ASSIGN(JsonValue list, r.require("decoders"));
    GPS_ASSIGN(std::vector<JsonValue> steps, list.elements(kMaxSequenceSteps));
    if (!steps.empty() && depth >= kMaxSectionDepth) return section_depth_error(where);
    const size_t base = where.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      append_step(where, "decoders", i);
      GPS_ASSIGN(Decoder child, parse(steps[i].json(), where, depth + 1));
      where.resize(base);
      d.children.push_back(std::move(child));
    }
  } else {
    return unsupported(where + ": unsupported decoder type \"" + type + "\"");
  }
  return d;
}

void Decoder::decode_chain(std::vector<std::string>& tokens) const {
  switch (kind) {
    case Kind::ByteLevel: {
      std::string bytes;
      for (const auto& t : tokens) byte_level_bytes(t, bytes);
      tokens.assign(1, sanitize_utf8(bytes));
      break;
    }
    case Kind::Replace:
      for (auto& t : tokens) t = replace_all(t, pattern, content);
      break;
    case Kind::ByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      auto flush = [&] {
        if (pending.empty()) return;
        if (is_valid_utf8(pending)) {
          out.push_back(pending);
        } else {
          for (size_t k = 0; k < pending.size(); ++k) out.emplace_back("\xEF\xBF\xBD");
        }
        pending.clear();
      };
      for (auto& t : tokens) {
        int b = byte_token(t);
        if (b >= 0) {
          pending.push_back(static_cast<char>(b));
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      tokens = std::move(out);
      break;
    }
    case Kind::Fuse: {
      std::string all;
      for (const auto& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      break;
    }
    case Kind::Strip: {
      size_t i = 0;
      char32_t c = next_code_point(content, i);
      for (auto& t : tokens) t = strip_chars(t, c, strip_start, strip_stop);
      break;
    }
    case Kind::Metaspace: {
      for (size_t k = 0; k < tokens.size(); ++k) {
        std::string out;
        const std::string& t = tokens[k];
        for (size_t pos = 0; pos < t.size();) {
          if (t.compare(pos, content.size(), content) == 0) {
            if (!(k == 0 && metaspace_prefix)) out.push_back(' ');
            pos += content.size();
          } else {
            out.push_back(t[pos++]);
          }
        }
        tokens[k] = std::move(out);
      }
      break;
    }
    case Kind::Sequence:
      for (const auto& c : children) c.decode_chain(tokens);
      break;
  }
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  decode_chain(tokens);
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

bool Decoder::token_bytes(const std::string& token, bool first, std::string& out) const {
  std::string t = token;
  std::vector<const Decoder*> steps;
  if (kind == Kind::Sequence) {
    for (const auto& c : children) steps.push_back(&c);
  } else {
    steps.push_back(this);
  }
  bool joined = false;  // a step that joins tokens (ByteLevel, Fuse) ran: later steps see the whole text
  for (const Decoder* d : steps) {
    if (joined && (d->kind == Kind::Replace || d->kind == Kind::Metaspace || d->kind == Kind::ByteFallback ||
                   (d->kind == Kind::Strip && d->strip_start > 1))) {
      return false;
    }
    switch (d->kind) {
      case Kind::ByteLevel: {
        joined = true;
        std::string b;
        byte_level_bytes(t, b);
        t = std::move(b);
        break;
      }
      case Kind::Replace:
        t = replace_all(t, d->pattern, d->content);
        break;
      case Kind::ByteFallback: {
        int b = byte_token(t);
        if (b >= 0) t.assign(1, static_cast<char>(b));
        break;
      }
      case Kind::Fuse:
        break;
      case Kind::Strip: {
        if (d->strip_stop > 0) return false;
        if (first) {
          size_t i = 0;
          t = strip_chars(t, next_code_point(d->content, i), d->strip_start, 0);
        }
        break;
      }
      case Kind::Metaspace: {
        std::vector<std::string> one{t};
        Decoder m = *d;
        m.metaspace_prefix = d->metaspace_prefix && first;
        m.decode_chain(one);
        t = one[0];
        break;
      }
      case Kind::Sequence:
        return false;
    }
  }
  out += t;
  return true;
}

}  // namespace gpstream::tokenizer
