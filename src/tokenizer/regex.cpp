#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace gpstream::tokenizer {

struct Pattern::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {
// One match-data block per thread (one ovector pair is enough: we only need the whole match).
struct MatchData {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  ~MatchData() { pcre2_match_data_free(data); }
};
pcre2_match_data* thread_match_data() {
  thread_local MatchData md;
  return md.data;
}
}  // namespace

Result<Pattern> Pattern::literal(std::string text) {
  if (text.empty()) return invalid_argument("empty string pattern");
  Pattern p;
  p.source_ = std::move(text);
  return p;
}

Result<Pattern> Pattern::regex(const std::string& expression) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expression.data()), expression.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return invalid_argument("regex " + expression + ": " + reinterpret_cast<const char*>(msg) +
                            " at offset " + std::to_string(offset));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
  auto c = std::make_shared<Code>();
  c->code = code;
  Pattern p;
  p.source_ = expression;
  p.code_ = std::move(c);
  return p;
}

void Pattern::find_all(std::string_view s, std::vector<Span>& out) const {
  out.clear();
  if (!code_) {
    for (size_t pos = s.find(source_); pos != std::string_view::npos;
         pos = s.find(source_, pos + source_.size())) {
      out.emplace_back(pos, pos + source_.size());
    }
    return;
  }
  pcre2_match_data* md = thread_match_data();
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  size_t start = 0;
  while (start <= s.size()) {
    int rc = pcre2_match(code_->code, subject, s.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc < 0) break;  // PCRE2_ERROR_NOMATCH (or a resource limit: no further matches)
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      start = e;
    } else {
      // Empty match: skip one code point.
      if (b >= s.size()) break;
      start = b + 1;
      while (start < s.size() && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) ++start;
    }
  }
}

}  // namespace gpstream::tokenizer
