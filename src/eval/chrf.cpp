#include "eval/chrf.h"

#include <cstdio>
#include <unordered_map>

#include "eval/bleu.h"
#include "eval/reference_streams.h"
#include "eval/unicode_text.h"

namespace gpstream::eval {

namespace {

using Counter = std::unordered_map<std::string, int64_t>;

// `string.punctuation`, the set chrF++ splits off word edges.
bool is_ascii_punct(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// `extract_all_char_ngrams`: orders 1..max_order over code points.
std::vector<Counter> char_ngrams(std::string_view line, int max_order, bool include_whitespace) {
  std::string joined;
  if (include_whitespace) {
    joined.assign(line);
  } else {
    for (auto w : python_split(line)) joined.append(w);
  }
  const auto cps = decode_utf8(joined);
  std::vector<Counter> out(static_cast<size_t>(max_order));
  for (int n = 1; n <= max_order; ++n) {
    if (cps.size() < static_cast<size_t>(n)) continue;
    auto& dst = out[static_cast<size_t>(n - 1)];
    for (size_t i = 0; i + static_cast<size_t>(n) <= cps.size(); ++i) {
      const auto& last = cps[i + static_cast<size_t>(n) - 1];
      ++dst[joined.substr(cps[i].offset, last.offset + last.length - cps[i].offset)];
    }
  }
  return out;
}

// `CHRF._remove_punctuation`: one punctuation character split off the end, else off the start.
std::vector<std::string> chrf_words(std::string_view sent) {
  std::vector<std::string> out;
  for (auto w : python_split(sent)) {
    const auto cps = decode_utf8(w);
    if (cps.size() == 1) {
      out.emplace_back(w);
    } else if (is_ascii_punct(cps.back().cp)) {
      out.emplace_back(w.substr(0, cps.back().offset));
      out.emplace_back(w.substr(cps.back().offset));
    } else if (is_ascii_punct(cps.front().cp)) {
      out.emplace_back(w.substr(0, cps.front().length));
      out.emplace_back(w.substr(cps.front().length));
    } else {
      out.emplace_back(w);
    }
  }
  return out;
}

// Word n-grams of order n; words joined by U+001F, which Python's split() treats as whitespace,
// so no word contains it.
Counter word_ngrams(const std::vector<std::string>& words, int n) {
  Counter c;
  for (size_t i = 0; i + static_cast<size_t>(n) <= words.size(); ++i) {
    std::string key = words[i];
    for (int j = 1; j < n; ++j) {
      key.push_back('\x1f');
      key += words[i + static_cast<size_t>(j)];
    }
    ++c[key];
  }
  return c;
}

std::vector<Counter> all_ngrams(std::string_view sent, const ChrfOptions& o) {
  auto v = char_ngrams(sent, o.char_order, o.whitespace);
  if (o.word_order > 0) {
    const auto words = chrf_words(sent);
    for (int n = 1; n <= o.word_order; ++n) v.push_back(word_ngrams(words, n));
  }
  return v;
}

Status check_options(const ChrfOptions& o) {
  if (o.char_order < 0 || o.word_order < 0 || o.char_order + o.word_order < 1)
    return invalid_argument("chrF: char_order and word_order must be >= 0, and not both 0");
  return {};
}

}  // namespace

double chrf_f_score(const ChrfStats& stats, const ChrfOptions& options) {
  const double eps = 1e-16;
  double score = 0.0;
  int effective_order = 0;
  const double factor = static_cast<double>(options.beta) * static_cast<double>(options.beta);
  double avg_prec = 0.0, avg_rec = 0.0;
  const size_t order = stats.size() / 3;
  for (size_t i = 0; i < order; ++i) {
    const auto n_hyp = static_cast<double>(stats[3 * i]);
    const auto n_ref = static_cast<double>(stats[3 * i + 1]);
    const auto n_match = static_cast<double>(stats[3 * i + 2]);
    const double prec = n_hyp > 0 ? n_match / n_hyp : eps;
    const double rec = n_ref > 0 ? n_match / n_ref : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * score / static_cast<double>(order);
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0.0) {
    score = (1 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    return 100 * score;
  }
  return 0.0;
}

Result<ChrfStats> chrf_segment_stats(std::string_view hypothesis,
                                     const std::vector<std::string_view>& references,
                                     const ChrfOptions& options) {
  GPS_TRY(check_options(options));
  auto prep = [&](std::string_view s) { return options.lowercase ? python_lower(s) : std::string(s); };
  const auto hyp = all_ngrams(prep(hypothesis), options);
  ChrfStats best;
  double best_f = -1.0;
  bool any = false;
  for (auto r : references) {
    if (r.empty()) continue;
    any = true;
    const auto ref = all_ngrams(prep(r), options);
    ChrfStats stats;
    for (size_t o = 0; o < hyp.size(); ++o) {
      int64_t match = 0, hyp_count = 0, ref_count = 0;
      for (const auto& [ng, c] : hyp[o]) {
        hyp_count += c;
        auto it = ref[o].find(ng);
        if (it != ref[o].end()) match += std::min(c, it->second);
      }
      for (const auto& [ng, c] : ref[o]) ref_count += c;
      stats.push_back(ref[o].empty() ? 0 : hyp_count);
      stats.push_back(ref_count);
      stats.push_back(match);
    }
    const double f = chrf_f_score(stats, options);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  if (!any) return invalid_argument("chrF: empty reference (every reference of this segment is empty)");
  return best;
}

Result<std::vector<ChrfStats>> chrf_corpus_stats(const std::vector<std::string>& hyps,
                                                 const std::vector<std::vector<std::string>>& ref_streams,
                                                 const ChrfOptions& options, int* num_refs) {
  GPS_TRY(check_options(options));
  GPS_ASSIGN(const int n_refs, check_reference_streams("chrF", hyps.size(), ref_streams));
  std::vector<ChrfStats> out;
  std::vector<std::string_view> refs;
  for (size_t i = 0; i < hyps.size(); ++i) {
    refs.clear();
    for (const auto& s : ref_streams) refs.push_back(s[i]);
    GPS_ASSIGN(auto st, chrf_segment_stats(hyps[i], refs, options));
    out.push_back(std::move(st));
  }
  if (num_refs) *num_refs = n_refs;
  return out;
}

Result<ChrfResult> corpus_chrf(const std::vector<std::string>& hyps,
                               const std::vector<std::vector<std::string>>& ref_streams,
                               const ChrfOptions& options) {
  int num_refs = 0;
  GPS_ASSIGN(auto stats, chrf_corpus_stats(hyps, ref_streams, options, &num_refs));
  ChrfStats total(static_cast<size_t>(3 * (options.char_order + options.word_order)), 0);
  for (const auto& s : stats) {
    for (size_t i = 0; i < total.size(); ++i) total[i] += s[i];
  }
  ChrfResult r;
  r.score = chrf_f_score(total, options);
  r.num_refs = num_refs;
  return r;
}

Result<double> sentence_chrf(std::string_view hypothesis, const std::vector<std::string_view>& references,
                             const ChrfOptions& options) {
  GPS_ASSIGN(auto st, chrf_segment_stats(hypothesis, references, options));
  return chrf_f_score(st, options);
}

std::string chrf_name(const ChrfOptions& options) {
  return "chrF" + std::to_string(options.beta) + std::string(static_cast<size_t>(options.word_order), '+');
}

std::string chrf_signature(const ChrfOptions& o, int num_refs, bool short_form) {
  std::string s;
  auto add = [&](std::string_view long_key, std::string_view short_key, const std::string& value) {
    if (!s.empty()) s += '|';
    s += short_form ? short_key : long_key;
    s += ':';
    s += value;
  };
  add("nrefs", "#", num_refs < 0 ? std::string("var") : std::to_string(num_refs));
  add("case", "c", o.lowercase ? "lc" : "mixed");
  add("eff", "e", o.eps_smoothing ? "no" : "yes");
  add("nc", "nc", std::to_string(o.char_order));
  add("nw", "nw", std::to_string(o.word_order));
  add("space", "s", o.whitespace ? "yes" : "no");
  add("version", "v", std::string(kSacrebleuVersion));
  return s;
}

std::string format_chrf_line(double score, const ChrfOptions& options, std::string_view signature,
                             int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", width, score);
  std::string line = chrf_name(options);
  if (!signature.empty()) {
    line += '|';
    line += signature;
  }
  return line + " = " + buf;
}

}  // namespace gpstream::eval
