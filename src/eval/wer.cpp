#include "eval/wer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <unordered_map>
#include <utility>

#include "eval/unicode_text.h"
#include "tokenizer/unicode.h"

namespace gpstream::eval {

namespace {

utf8proc_category_t category_of(char32_t cp) {
  if (cp > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

// Letters, marks and numbers: what may stand on both sides of an apostrophe kept inside a word.
bool is_word_char(char32_t cp) {
  return tokenizer::is_letter_mark_or_digit(cp) || category_of(cp) == UTF8PROC_CATEGORY_NO;
}

// NFKC of valid UTF-8; anything else (or a libutf8proc failure) is returned unchanged.
std::string nfkc(std::string_view s) {
  if (s.empty() || !is_valid_utf8(s)) return std::string(s);
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()), &out,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  if (n < 0 || out == nullptr) {
    std::free(out);
    return std::string(s);
  }
  std::string r(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return r;
}

// A best-so-far DP cell: fewest edits, then most substitutions.
struct Cell {
  int64_t edits;
  int64_t subs;
};

bool better(const Cell& a, const Cell& b) {
  return a.edits < b.edits || (a.edits == b.edits && a.subs > b.subs);
}

}  // namespace

Result<WerNormalization> parse_wer_normalization(std::string_view name) {
  if (name == "basic") return WerNormalization::Basic;
  if (name == "none") return WerNormalization::None;
  return invalid_argument("unknown WER normalisation '" + std::string(name) + "' (known: basic, none)");
}

const char* wer_normalization_name(WerNormalization n) {
  return n == WerNormalization::Basic ? "basic" : "none";
}

std::string wer_normalize(std::string_view text) {
  const std::string lowered = python_lower(nfkc(text));
  const auto cps = decode_utf8(lowered);
  std::string mapped;
  mapped.reserve(lowered.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t cp = cps[i].cp;
    if (cp == U'\'' || cp == U'\u2019') {
      const bool inside =
          i > 0 && i + 1 < cps.size() && is_word_char(cps[i - 1].cp) && is_word_char(cps[i + 1].cp);
      mapped += inside ? '\'' : ' ';
      continue;
    }
    if (is_unicode_punctuation(cp) || is_unicode_symbol(cp)) {
      mapped += ' ';
      continue;
    }
    const auto cat = category_of(cp);
    if (cat == UTF8PROC_CATEGORY_CF) continue;  // soft hyphen, zero-width space, ...: dropped
    if (cat == UTF8PROC_CATEGORY_CC && !is_python_space(cp)) {
      mapped += ' ';
      continue;
    }
    mapped.append(lowered, cps[i].offset, cps[i].length);
  }
  return python_normalize_spaces(mapped);
}

std::vector<std::string> wer_words(std::string_view text, WerNormalization normalization) {
  std::vector<std::string> out;
  if (normalization == WerNormalization::None) {
    for (auto w : python_split(text)) out.emplace_back(w);
    return out;
  }
  const std::string norm = wer_normalize(text);
  for (auto w : python_split(norm)) out.emplace_back(w);
  return out;
}

WerCounts& WerCounts::operator+=(const WerCounts& o) {
  hits += o.hits;
  substitutions += o.substitutions;
  deletions += o.deletions;
  insertions += o.insertions;
  reference_words += o.reference_words;
  hypothesis_words += o.hypothesis_words;
  return *this;
}

Result<WerCounts> align_words(const std::vector<std::string>& reference,
                              const std::vector<std::string>& hypothesis) {
  const auto n = static_cast<int64_t>(reference.size());
  const auto m = static_cast<int64_t>(hypothesis.size());
  if (n > 0 && m > kMaxWerAlignmentCells / n) {
    return invalid_argument("WER: aligning " + std::to_string(n) + " reference words with " +
                            std::to_string(m) + " hypothesis words exceeds the limit of " +
                            std::to_string(kMaxWerAlignmentCells) + " cells");
  }
  // Words as ids: one string comparison per distinct word instead of per cell.
  std::unordered_map<std::string_view, int32_t> ids;
  auto id_of = [&](const std::string& w) {
    return ids.try_emplace(w, static_cast<int32_t>(ids.size())).first->second;
  };
  std::vector<int32_t> ref(reference.size()), hyp(hypothesis.size());
  for (size_t i = 0; i < reference.size(); ++i) ref[i] = id_of(reference[i]);
  for (size_t j = 0; j < hypothesis.size(); ++j) hyp[j] = id_of(hypothesis[j]);

  // Row i holds the best (edits, substitutions) for ref[0, i) against hyp[0, j).
  std::vector<Cell> prev(static_cast<size_t>(m) + 1), cur(static_cast<size_t>(m) + 1);
  for (int64_t j = 0; j <= m; ++j) prev[static_cast<size_t>(j)] = {j, 0};
  for (int64_t i = 1; i <= n; ++i) {
    cur[0] = {i, 0};
    const int32_t r = ref[static_cast<size_t>(i - 1)];
    for (size_t j = 1; j <= static_cast<size_t>(m); ++j) {
      const bool same = r == hyp[j - 1];
      Cell best{prev[j - 1].edits + (same ? 0 : 1), prev[j - 1].subs + (same ? 0 : 1)};
      const Cell del{prev[j].edits + 1, prev[j].subs};
      const Cell ins{cur[j - 1].edits + 1, cur[j - 1].subs};
      if (better(del, best)) best = del;
      if (better(ins, best)) best = ins;
      cur[j] = best;
    }
    std::swap(prev, cur);
  }
  const Cell end = prev[static_cast<size_t>(m)];
  // S + D + I = edits and D − I = n − m fix D and I once S is known.
  WerCounts c;
  c.reference_words = n;
  c.hypothesis_words = m;
  c.substitutions = end.subs;
  c.deletions = (end.edits - end.subs + (n - m)) / 2;
  c.insertions = (end.edits - end.subs - (n - m)) / 2;
  c.hits = n - c.substitutions - c.deletions;
  GPS_ASSERT(
      c.deletions >= 0 && c.insertions >= 0 && c.hits >= 0 && c.hits + c.substitutions + c.insertions == m,
      "WER alignment counts are inconsistent");
  return c;
}

Result<WerCounts> wer_counts(std::string_view reference, std::string_view hypothesis,
                             WerNormalization normalization) {
  return align_words(wer_words(reference, normalization), wer_words(hypothesis, normalization));
}

Result<WerResult> corpus_wer(const std::vector<std::string>& references,
                             const std::vector<std::string>& hypotheses, WerNormalization normalization) {
  if (references.size() != hypotheses.size()) {
    return invalid_argument("WER: " + std::to_string(hypotheses.size()) + " hypotheses for " +
                            std::to_string(references.size()) + " references");
  }
  WerResult r;
  for (size_t k = 0; k < references.size(); ++k) {
    auto c = wer_counts(references[k], hypotheses[k], normalization);
    if (!c.ok()) return c.error().with_context("pair " + std::to_string(k));
    r.counts += *c;
  }
  if (r.counts.reference_words == 0) {
    if (r.counts.hypothesis_words != 0) {
      return invalid_argument("WER is undefined: the references have no words but the hypotheses have " +
                              std::to_string(r.counts.hypothesis_words));
    }
    r.wer = 0.0;
    return r;
  }
  r.wer = static_cast<double>(r.counts.edits()) / static_cast<double>(r.counts.reference_words);
  return r;
}

}  // namespace gpstream::eval
