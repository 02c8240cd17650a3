#include "eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "eval/reference_streams.h"
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

// Exact n-gram counts keyed by token-id vectors: the fallback for segments whose n-grams do not
// fit a packed 64-bit key (see bleu_segment_stats).
using ExactCounts = std::vector<std::map<std::vector<uint32_t>, int64_t>>;

ExactCounts count_exact(const std::vector<uint32_t>& ids, int max_order) {
  ExactCounts out(static_cast<size_t>(max_order));
  for (int n = 1; n <= max_order; ++n) {
    for (size_t i = 0; i + static_cast<size_t>(n) <= ids.size(); ++i) {
      std::vector<uint32_t> key(ids.begin() + static_cast<std::ptrdiff_t>(i),
                                ids.begin() + static_cast<std::ptrdiff_t>(i) + n);
      ++out[static_cast<size_t>(n - 1)][key];
    }
  }
  return out;
}

// Per-thread buffers reused across segments (the 100k-segment benchmark is allocation-bound otherwise).
struct SegmentScratch {
  std::vector<std::string> texts;        // refs..., hyp (preprocessed)
  std::vector<std::string_view> tokens;  // all tokens, text after text
  std::vector<size_t> bounds;            // token range of text k: [bounds[k], bounds[k+1])
  struct Slot {
    uint32_t stamp = 0;
    uint64_t hash = 0;
    std::string_view text;
    uint32_t id = 0;
  };
  std::vector<Slot> slots;  // open-addressing token table; a slot is live when stamp matches
  uint32_t stamp = 0;
  std::vector<uint32_t> ids;
  std::vector<uint64_t> keys;
  std::vector<std::pair<uint64_t, int64_t>> ref_counts, one_ref, merged, hyp_counts;
};

// Sorted (key, count) list of all n-grams of orders 1..max_order of ids[begin, end). A key holds
// the order in its top 6 bits and the ids packed below (ids >= 1, so orders never collide).
void packed_counts(const std::vector<uint32_t>& ids, size_t begin, size_t end, int max_order, int bits,
                   std::vector<uint64_t>& keys, std::vector<std::pair<uint64_t, int64_t>>& out) {
  keys.clear();
  const size_t len = end - begin;
  for (int n = 1; n <= max_order; ++n) {
    if (len < static_cast<size_t>(n)) break;
    const uint64_t tag = static_cast<uint64_t>(n) << 58;
    for (size_t i = begin; i + static_cast<size_t>(n) <= end; ++i) {
      uint64_t k = 0;
      for (int j = 0; j < n; ++j) k = (k << bits) | ids[i + static_cast<size_t>(j)];
      keys.push_back(tag | k);
    }
  }
  std::sort(keys.begin(), keys.end());
  out.clear();
  for (size_t i = 0; i < keys.size();) {
    size_t j = i + 1;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    out.emplace_back(keys[i], static_cast<int64_t>(j - i));
    i = j;
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
  if (options.max_ngram_order < 1 || options.max_ngram_order > 63) {
    return invalid_argument("BLEU: max_ngram_order must be in 1..63");
  }
  const int max_order = options.max_ngram_order;
  thread_local SegmentScratch sc;

  // Preprocess: non-empty references, then the hypothesis last.
  sc.texts.clear();
  for (auto r : references) {
    if (!r.empty()) sc.texts.push_back(bleu_preprocess(r, options));
  }
  const size_t n_refs = sc.texts.size();
  if (n_refs == 0)
    return invalid_argument("BLEU: empty reference (every reference of this segment is empty)");
  sc.texts.push_back(bleu_preprocess(hypothesis, options));

  // Segment-local token ids (exact: equal strings ↔ equal ids) from a small open-addressing table
  // (hash to find the slot, string comparison to confirm).
  sc.tokens.clear();
  sc.bounds.assign(1, 0);
  for (const auto& t : sc.texts) {
    python_split_into(t, sc.tokens);
    sc.bounds.push_back(sc.tokens.size());
  }
  size_t cap = 16;
  while (cap < 2 * sc.tokens.size()) cap <<= 1;
  if (sc.slots.size() < cap) {
    sc.slots.assign(cap, {});
    sc.stamp = 0;
  }
  ++sc.stamp;
  if (sc.stamp == 0) {  // wrapped: clear all stamps
    for (auto& sl : sc.slots) sl.stamp = 0;
    sc.stamp = 1;
  }
  const size_t mask = cap - 1;
  sc.ids.assign(sc.tokens.size(), 0);
  uint32_t vocab = 0;
  for (size_t t = 0; t < sc.tokens.size(); ++t) {
    const std::string_view tok = sc.tokens[t];
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char ch : tok) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    size_t pos = static_cast<size_t>(h ^ (h >> 29)) & mask;
    while (true) {
      auto& sl = sc.slots[pos];
      if (sl.stamp != sc.stamp) {
        sl = {sc.stamp, h, tok, ++vocab};
        sc.ids[t] = vocab;
        break;
      }
      if (sl.hash == h && sl.text == tok) {
        sc.ids[t] = sl.id;
        break;
      }
      pos = (pos + 1) & mask;
    }
  }
  int bits = 1;
  while ((uint64_t{1} << bits) <= vocab) ++bits;

  BleuStats st;
  st.correct.assign(static_cast<size_t>(max_order), 0);
  st.total.assign(static_cast<size_t>(max_order), 0);
  std::vector<int64_t> ref_lens;
  for (size_t k = 0; k < n_refs; ++k)
    ref_lens.push_back(static_cast<int64_t>(sc.bounds[k + 1] - sc.bounds[k]));
  st.hyp_len = static_cast<int64_t>(sc.bounds[n_refs + 1] - sc.bounds[n_refs]);
  st.ref_len = closest_ref_len(st.hyp_len, ref_lens);

  if (bits * max_order <= 58) {
    // Reference counts: max over references (multi-reference clipping).
    packed_counts(sc.ids, sc.bounds[0], sc.bounds[1], max_order, bits, sc.keys, sc.ref_counts);
    for (size_t k = 1; k < n_refs; ++k) {
      packed_counts(sc.ids, sc.bounds[k], sc.bounds[k + 1], max_order, bits, sc.keys, sc.one_ref);
      sc.merged.clear();
      const auto& x = sc.ref_counts;
      const auto& y = sc.one_ref;
      size_t i = 0, j = 0;
      while (i < x.size() || j < y.size()) {
        if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
          sc.merged.push_back(x[i++]);
        } else if (i == x.size() || y[j].first < x[i].first) {
          sc.merged.push_back(y[j++]);
        } else {
          sc.merged.emplace_back(x[i].first, std::max(x[i].second, y[j].second));
          ++i, ++j;
        }
      }
      sc.ref_counts.swap(sc.merged);
    }
    packed_counts(sc.ids, sc.bounds[n_refs], sc.bounds[n_refs + 1], max_order, bits, sc.keys, sc.hyp_counts);
    size_t j = 0;
    const auto& r = sc.ref_counts;
    for (const auto& [key, count] : sc.hyp_counts) {
      const auto order = static_cast<size_t>(key >> 58) - 1;
      st.total[order] += count;
      while (j < r.size() && r[j].first < key) ++j;
      if (j < r.size() && r[j].first == key) st.correct[order] += std::min(count, r[j].second);
    }
    return st;
  }

  // Exact path (very long or very high-order segments).
  auto slice = [&](size_t k) {
    return std::vector<uint32_t>(sc.ids.begin() + static_cast<std::ptrdiff_t>(sc.bounds[k]),
                                 sc.ids.begin() + static_cast<std::ptrdiff_t>(sc.bounds[k + 1]));
  };
  ExactCounts ref_counts = count_exact(slice(0), max_order);
  for (size_t k = 1; k < n_refs; ++k) {
    const ExactCounts c = count_exact(slice(k), max_order);
    for (size_t o = 0; o < c.size(); ++o) {
      for (const auto& [key, cnt] : c[o]) {
        auto& dst = ref_counts[o][key];
        dst = std::max(dst, cnt);
      }
    }
  }
  const ExactCounts hyp_counts = count_exact(slice(n_refs), max_order);
  for (size_t o = 0; o < static_cast<size_t>(max_order); ++o) {
    for (const auto& [key, count] : hyp_counts[o]) {
      st.total[o] += count;
      auto it = ref_counts[o].find(key);
      if (it != ref_counts[o].end()) st.correct[o] += std::min(count, it->second);
    }
  }
  return st;
}

Result<std::vector<BleuStats>> bleu_corpus_stats(const std::vector<std::string>& hyps,
                                                 const std::vector<std::vector<std::string>>& ref_streams,
                                                 const BleuOptions& options, int* num_refs) {
  GPS_ASSIGN(const int n_refs, check_reference_streams("BLEU", hyps.size(), ref_streams));
  // Segments are independent: split them over the OpenMP threads (the first error wins).
  std::vector<BleuStats> out(hyps.size());
  std::vector<std::optional<Error>> errors(hyps.size());
  const auto n = static_cast<int64_t>(hyps.size());
#pragma omp parallel for schedule(dynamic, 256) if (n > 2048)
  for (int64_t si = 0; si < n; ++si) {
    const auto i = static_cast<size_t>(si);
    std::vector<std::string_view> refs;
    refs.reserve(ref_streams.size());
    for (const auto& stream : ref_streams) refs.push_back(stream[i]);
    auto st = bleu_segment_stats(hyps[i], refs, options);
    if (st.ok()) {
      out[i] = std::move(st).value();
    } else {
      errors[i] = st.error().with_context("segment " + std::to_string(i + 1));
    }
  }
  for (auto& e : errors) {
    if (e) return *e;
  }
  if (num_refs) *num_refs = n_refs;
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
