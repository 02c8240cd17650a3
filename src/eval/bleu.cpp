#include "eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "eval/unicode_text.h"

namespace gpstream::eval {

namespace {

// sacrebleu.utils.my_log: log(0) is replaced by -9999999999 so a zero precision zeroes the score.
double my_log(double x) {
  return x == 0.0 ? -9999999999.0 : std::log(x);
}

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Sorted (n-gram, count) lists for orders 1..N over segment-local token ids. An n-gram is packed
// into 64 bits when n * bits(vocabulary) fits, which covers every realistic sentence; longer
// segments fall back to exact vector keys.
struct NgramCounts {
  std::vector<std::vector<std::pair<uint64_t, int64_t>>> packed;  // per order
  std::vector<std::map<std::vector<uint32_t>, int64_t>> exact;    // per order (fallback)
};

NgramCounts count_ngrams(const std::vector<uint32_t>& ids, int max_order, int bits, bool use_packed) {
  NgramCounts out;
  const size_t len = ids.size();
  if (use_packed) {
    out.packed.resize(static_cast<size_t>(max_order));
    std::vector<uint64_t> keys;
    for (int n = 1; n <= max_order; ++n) {
      keys.clear();
      if (len >= static_cast<size_t>(n)) {
        for (size_t i = 0; i + static_cast<size_t>(n) <= len; ++i) {
          uint64_t k = 0;
          for (int j = 0; j < n; ++j) k = (k << bits) | ids[i + static_cast<size_t>(j)];
          keys.push_back(k);
        }
      }
      std::sort(keys.begin(), keys.end());
      auto& dst = out.packed[static_cast<size_t>(n - 1)];
      for (size_t i = 0; i < keys.size();) {
        size_t j = i;
        while (j < keys.size() && keys[j] == keys[i]) ++j;
        dst.emplace_back(keys[i], static_cast<int64_t>(j - i));
        i = j;
      }
    }
  } else {
    out.exact.resize(static_cast<size_t>(max_order));
    for (int n = 1; n <= max_order; ++n) {
      if (len < static_cast<size_t>(n)) continue;
      for (size_t i = 0; i + static_cast<size_t>(n) <= len; ++i) {
        std::vector<uint32_t> key(ids.begin() + static_cast<std::ptrdiff_t>(i),
                                  ids.begin() + static_cast<std::ptrdiff_t>(i) + n);
        ++out.exact[static_cast<size_t>(n - 1)][key];
      }
    }
  }
  return out;
}

// Merges b into a taking the max count per n-gram (multi-reference clipping counts).
void merge_max(NgramCounts& a, const NgramCounts& b) {
  for (size_t o = 0; o < a.packed.size(); ++o) {
    std::vector<std::pair<uint64_t, int64_t>> m;
    const auto& x = a.packed[o];
    const auto& y = b.packed[o];
    m.reserve(x.size() + y.size());
    size_t i = 0, j = 0;
    while (i < x.size() || j < y.size()) {
      if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
        m.push_back(x[i++]);
      } else if (i == x.size() || y[j].first < x[i].first) {
        m.push_back(y[j++]);
      } else {
        m.emplace_back(x[i].first, std::max(x[i].second, y[j].second));
        ++i, ++j;
      }
    }
    a.packed[o].swap(m);
  }
  for (size_t o = 0; o < a.exact.size(); ++o) {
    for (const auto& [k, c] : b.exact[o]) {
      auto& dst = a.exact[o][k];
      dst = std::max(dst, c);
    }
  }
}

// `BLEU._get_closest_ref_len`: smallest |hyp - ref|, ties → the shorter reference.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t best_diff = -1, best_len = -1;
  for (int64_t r : ref_lens) {
    const int64_t diff = hyp_len > r ? hyp_len - r : r - hyp_len;
    if (best_diff == -1 || diff < best_diff) {
      best_diff = diff;
      best_len = r;
    } else if (diff == best_diff && r < best_len) {
      best_len = r;
    }
  }
  return best_len;
}

}  // namespace

std::string_view smooth_method_name(SmoothMethod m) {
  switch (m) {
    case SmoothMethod::None:
      return "none";
    case SmoothMethod::Floor:
      return "floor";
    case SmoothMethod::AddK:
      return "add-k";
    case SmoothMethod::Exp:
      return "exp";
  }
  GPS_ASSERT(false, "unknown smooth method");
}

Result<SmoothMethod> parse_smooth_method(std::string_view name) {
  for (auto m : {SmoothMethod::None, SmoothMethod::Floor, SmoothMethod::AddK, SmoothMethod::Exp}) {
    if (smooth_method_name(m) == name) return m;
  }
  return invalid_argument("unknown BLEU smoothing method '" + std::string(name) +
                          "' (expected exp, floor, add-k or none)");
}

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  if (correct.size() < o.correct.size()) correct.resize(o.correct.size(), 0);
  if (total.size() < o.total.size()) total.resize(o.total.size(), 0);
  for (size_t i = 0; i < o.correct.size(); ++i) correct[i] += o.correct[i];
  for (size_t i = 0; i < o.total.size(); ++i) total[i] += o.total[i];
  return *this;
}

static double default_smooth_value(SmoothMethod m) {
  switch (m) {
    case SmoothMethod::Floor:
      return 0.1;
    case SmoothMethod::AddK:
      return 1.0;
    default:
      return 0.0;
  }
}

BleuScore compute_bleu(std::vector<double> correct, std::vector<double> total, int64_t sys_len,
                       int64_t ref_len, SmoothMethod smooth_method, std::optional<double> smooth_value,
                       bool effective_order, int max_ngram_order) {
  GPS_ASSERT(max_ngram_order >= 1, "max_ngram_order must be positive");
  const auto n_orders = static_cast<size_t>(max_ngram_order);
  correct.resize(n_orders, 0.0);
  total.resize(n_orders, 0.0);
  const double k = smooth_value.value_or(default_smooth_value(smooth_method));

  BleuScore s;
  s.sys_len = sys_len;
  s.ref_len = ref_len;
  if (sys_len < ref_len) {
    s.bp = sys_len > 0 ? std::exp(1.0 - static_cast<double>(ref_len) / static_cast<double>(sys_len)) : 0.0;
  } else {
    s.bp = 1.0;
  }
  s.precisions.assign(n_orders, 0.0);

  // Early stop if there are no matches (sacreBLEU #141).
  if (std::all_of(correct.begin(), correct.end(), [](double c) { return c == 0.0; })) {
    s.score = 0.0;
    s.counts = correct;
    s.totals = total;
    return s;
  }

  double smooth_mteval = 1.0;
  size_t eff_order = n_orders;
  for (size_t n = 1; n <= n_orders; ++n) {
    if (smooth_method == SmoothMethod::AddK && n > 1) {
      correct[n - 1] += k;
      total[n - 1] += k;
    }
    if (total[n - 1] == 0.0) break;
    // Effective order only drops orders with no hypothesis n-grams, not zero-match orders.
    if (effective_order) eff_order = n;
    if (correct[n - 1] == 0.0) {
      if (smooth_method == SmoothMethod::Exp) {
        smooth_mteval *= 2.0;
        s.precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1]);
      } else if (smooth_method == SmoothMethod::Floor) {
        s.precisions[n - 1] = 100.0 * k / total[n - 1];
      }
    } else {
      s.precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1];
    }
  }
  double log_sum = 0.0;
  for (size_t i = 0; i < eff_order; ++i) log_sum += my_log(s.precisions[i]);
  s.score = s.bp * std::exp(log_sum / static_cast<double>(eff_order));
  s.counts = std::move(correct);
  s.totals = std::move(total);
  return s;
}

BleuScore compute_bleu(const BleuStats& stats, const BleuOptions& options) {
  std::vector<double> correct(stats.correct.begin(), stats.correct.end());
  std::vector<double> total(stats.total.begin(), stats.total.end());
  return compute_bleu(std::move(correct), std::move(total), stats.hyp_len, stats.ref_len,
                      options.smooth_method, options.smooth_value, options.effective_order,
                      options.max_ngram_order);
}

std::string bleu_preprocess(std::string_view sentence, const BleuOptions& options) {
  if (options.lowercase) {
    const std::string lower = python_lower(sentence);
    return tokenize(options.tokenize, python_rstrip(lower));
  }
  return tokenize(options.tokenize, python_rstrip(sentence));
}

Result<BleuStats> bleu_segment_stats(std::string_view hypothesis,
                                     const std::vector<std::string_view>& references,
                                     const BleuOptions& options) {
  if (options.max_ngram_order < 1) return invalid_argument("BLEU: max_ngram_order must be >= 1");
  const int max_order = options.max_ngram_order;

  std::vector<std::string> ref_text;
  for (auto r : references) {
    if (!r.empty()) ref_text.push_back(bleu_preprocess(r, options));
  }
  if (ref_text.empty())
    return invalid_argument("BLEU: empty reference (every reference of this segment is empty)");
  const std::string hyp_text = bleu_preprocess(hypothesis, options);

  // Segment-local token ids.
  std::unordered_map<std::string_view, uint32_t> vocab;
  auto to_ids = [&](std::string_view text) {
    std::vector<uint32_t> ids;
    for (auto tok : python_split(text)) {
      auto [it, inserted] = vocab.try_emplace(tok, static_cast<uint32_t>(vocab.size() + 1));
      ids.push_back(it->second);
    }
    return ids;
  };
  std::vector<std::vector<uint32_t>> ref_ids;
  for (const auto& r : ref_text) ref_ids.push_back(to_ids(r));
  const std::vector<uint32_t> hyp_ids = to_ids(hyp_text);

  int bits = 1;
  while ((uint64_t{1} << bits) <= vocab.size() + 1) ++bits;
  const bool packed = bits * max_order <= 64;

  NgramCounts ref_counts;
  std::vector<int64_t> ref_lens;
  for (size_t i = 0; i < ref_ids.size(); ++i) {
    ref_lens.push_back(static_cast<int64_t>(ref_ids[i].size()));
    auto c = count_ngrams(ref_ids[i], max_order, bits, packed);
    if (i == 0) {
      ref_counts = std::move(c);
    } else {
      merge_max(ref_counts, c);
    }
  }
  const NgramCounts hyp_counts = count_ngrams(hyp_ids, max_order, bits, packed);

  BleuStats st;
  st.hyp_len = static_cast<int64_t>(hyp_ids.size());
  st.ref_len = closest_ref_len(st.hyp_len, ref_lens);
  st.correct.assign(static_cast<size_t>(max_order), 0);
  st.total.assign(static_cast<size_t>(max_order), 0);
  for (size_t o = 0; o < static_cast<size_t>(max_order); ++o) {
    if (packed) {
      const auto& h = hyp_counts.packed[o];
      const auto& r = ref_counts.packed[o];
      size_t j = 0;
      for (const auto& [key, count] : h) {
        st.total[o] += count;
        while (j < r.size() && r[j].first < key) ++j;
        if (j < r.size() && r[j].first == key) st.correct[o] += std::min(count, r[j].second);
      }
    } else {
      for (const auto& [key, count] : hyp_counts.exact[o]) {
        st.total[o] += count;
        auto it = ref_counts.exact[o].find(key);
        if (it != ref_counts.exact[o].end()) st.correct[o] += std::min(count, it->second);
      }
    }
  }
  return st;
}

Result<std::vector<BleuStats>> bleu_corpus_stats(const std::vector<std::string>& hyps,
                                                 const std::vector<std::vector<std::string>>& ref_streams,
                                                 const BleuOptions& options, int* num_refs) {
  if (ref_streams.empty()) return invalid_argument("BLEU: no reference stream given");
  for (size_t k = 0; k < ref_streams.size(); ++k) {
    if (ref_streams[k].size() != hyps.size()) {
      return invalid_argument("BLEU: the hypotheses have " + std::to_string(hyps.size()) +
                              " lines but reference " + std::to_string(k + 1) + " has " +
                              std::to_string(ref_streams[k].size()));
    }
  }
  std::vector<BleuStats> out;
  out.reserve(hyps.size());
  std::set<size_t> counts;
  std::vector<std::string_view> refs;
  for (size_t i = 0; i < hyps.size(); ++i) {
    refs.clear();
    size_t present = 0;
    for (const auto& stream : ref_streams) {
      refs.push_back(stream[i]);
      if (!stream[i].empty()) ++present;
    }
    if (present == 0) {
      return invalid_argument("BLEU: empty reference for segment " + std::to_string(i + 1) +
                              " (sacreBLEU: \"Empty or `None` reference sentence found.\")");
    }
    counts.insert(present);
    auto st = bleu_segment_stats(hyps[i], refs, options);
    if (!st.ok()) return st.error().with_context("segment " + std::to_string(i + 1));
    out.push_back(std::move(st).value());
  }
  if (num_refs)
    *num_refs =
        counts.size() <= 1 ? static_cast<int>(counts.empty() ? ref_streams.size() : *counts.begin()) : -1;
  return out;
}

BleuStats sum_stats(const std::vector<BleuStats>& stats, int max_ngram_order) {
  BleuStats total;
  total.correct.assign(static_cast<size_t>(max_ngram_order), 0);
  total.total.assign(static_cast<size_t>(max_ngram_order), 0);
  for (const auto& s : stats) total += s;
  return total;
}

Result<BleuResult> corpus_bleu(const std::vector<std::string>& hyps,
                               const std::vector<std::vector<std::string>>& ref_streams,
                               const BleuOptions& options) {
  int num_refs = 0;
  GPS_ASSIGN(auto stats, bleu_corpus_stats(hyps, ref_streams, options, &num_refs));
  BleuResult r;
  r.score = compute_bleu(sum_stats(stats, options.max_ngram_order), options);
  r.num_refs = num_refs;
  return r;
}

Result<BleuScore> sentence_bleu(std::string_view hypothesis, const std::vector<std::string_view>& references,
                                const BleuOptions& options) {
  GPS_ASSIGN(auto st, bleu_segment_stats(hypothesis, references, options));
  return compute_bleu(st, options);
}

BleuOptions sentence_bleu_options(BleuOptions options) {
  options.effective_order = true;
  return options;
}

std::string bleu_signature(const BleuOptions& options, int num_refs, bool short_form,
                           const SignatureExtras& extras) {
  std::string smooth(smooth_method_name(options.smooth_method));
  if (options.smooth_method == SmoothMethod::Floor || options.smooth_method == SmoothMethod::AddK) {
    smooth += '[';
    smooth += fmt_fixed(options.smooth_value.value_or(default_smooth_value(options.smooth_method)), 2);
    smooth += ']';
  }
  std::string s;
  auto add = [&](std::string_view long_key, std::string_view short_key, const std::string& value) {
    if (!s.empty()) s += '|';
    s += short_form ? short_key : long_key;
    s += ':';
    s += value;
  };
  add("nrefs", "#", num_refs < 0 ? std::string("var") : std::to_string(num_refs));
  if (extras.n_bootstrap) add("bs", "bs", std::to_string(*extras.n_bootstrap));
  if (extras.seed) add("seed", "rs", std::to_string(*extras.seed));
  add("case", "c", options.lowercase ? "lc" : "mixed");
  add("eff", "e", options.effective_order ? "yes" : "no");
  add("tok", "tok", std::string(tokenizer_name(options.tokenize)));
  add("smooth", "s", smooth);
  add("version", "v", std::string(kSacrebleuVersion));
  return s;
}

std::string bleu_verbose(const BleuScore& score) {
  std::string v;
  for (size_t i = 0; i < score.precisions.size(); ++i) {
    if (i) v += '/';
    v += fmt_fixed(score.precisions[i], 1);
  }
  v += " (BP = " + fmt_fixed(score.bp, 3) + " ratio = " + fmt_fixed(score.ratio(), 3) +
       " hyp_len = " + std::to_string(score.sys_len) + " ref_len = " + std::to_string(score.ref_len) + ")";
  return v;
}

std::string format_bleu_line(const BleuScore& score, std::string_view signature, int width) {
  std::string line = "BLEU";
  if (!signature.empty()) {
    line += '|';
    line += signature;
  }
  line += " = " + fmt_fixed(score.score, width) + " " + bleu_verbose(score);
  return line;
}

}  // namespace gpstream::eval
