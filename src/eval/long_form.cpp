#include "eval/long_form.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "eval/latency.h"
#include "eval/python_format.h"
#include "util/json_reader.h"
#include "util/memory_budget.h"

namespace gpstream::eval {

namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// The predecessor of a DP cell, 2 bits: hypothesis word inserted (same reference position), match or
// substitution, reference word deleted (same hypothesis position).
enum : uint8_t { kFromLeft = 0, kFromDiag = 1, kFromUp = 2 };

}  // namespace

std::vector<std::string> long_form_words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_ascii_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_ascii_space(text[i])) ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

Result<std::vector<size_t>> resegment_cuts(std::span<const std::string> hyp_words,
                                           const std::vector<std::vector<std::string>>& reference_words) {
  const size_t k_refs = reference_words.size();
  if (k_refs == 0) return invalid_argument("resegmentation: no reference sentences");
  // Words as ids, so the inner loop compares integers.
  std::unordered_map<std::string_view, int32_t> ids;
  auto id_of = [&](const std::string& w) {
    return ids.emplace(w, static_cast<int32_t>(ids.size())).first->second;
  };
  std::vector<int32_t> ref;
  std::vector<size_t> ends;
  for (size_t k = 0; k < k_refs; ++k) {
    if (reference_words[k].empty())
      return invalid_argument("resegmentation: reference sentence " + std::to_string(k) + " has no words");
    for (const auto& w : reference_words[k]) ref.push_back(id_of(w));
    ends.push_back(ref.size());
  }
  std::vector<int32_t> hyp;
  hyp.reserve(hyp_words.size());
  for (const auto& w : hyp_words) hyp.push_back(id_of(w));
  const size_t n = hyp.size();
  const size_t r = ref.size();
  const uint64_t cells = saturating_product({n + 1, r + 1});
  if (cells > kMaxResegmentCells) {
    return out_of_range("resegmentation: " + std::to_string(n) + " hypothesis words × " + std::to_string(r) +
                        " reference words is " + std::to_string(cells) + " alignment cells, more than the " +
                        std::to_string(kMaxResegmentCells) + " allowed (docs/evaluation.md)");
  }
  GPS_TRY(check_memory_budget(cells / 4 + 1 + 8 * (n + 1), "resegmentation"));

  // cost(j, p) = edit distance of hyp[0, j) and ref[0, p); row p kept, backpointers packed 4 per byte.
  std::vector<uint8_t> back((cells + 3) / 4, 0);
  auto set_back = [&](uint64_t cell, uint8_t code) {
    back[cell >> 2] |= static_cast<uint8_t>(code << ((cell & 3) * 2));
  };
  auto get_back = [&](uint64_t cell) {
    return static_cast<uint8_t>((back[cell >> 2] >> ((cell & 3) * 2)) & 3);
  };
  std::vector<int32_t> prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) cur[j] = static_cast<int32_t>(j);  // row 0: kFromLeft (0) everywhere
  for (size_t p = 1; p <= r; ++p) {
    std::swap(prev, cur);
    const uint64_t row = static_cast<uint64_t>(p) * (n + 1);
    cur[0] = static_cast<int32_t>(p);
    set_back(row, kFromUp);
    const int32_t rp = ref[p - 1];
    for (size_t j = 1; j <= n; ++j) {
      // Preference among equal costs: left, then diagonal, then up. Traced back from the end, this keeps the
      // path at the smallest hypothesis position in every column, so each cut is the earliest optimal one.
      int32_t best = cur[j - 1] + 1;
      uint8_t code = kFromLeft;
      const int32_t diag = prev[j - 1] + (hyp[j - 1] != rp ? 1 : 0);
      if (diag < best) best = diag, code = kFromDiag;
      if (prev[j] + 1 < best) best = prev[j] + 1, code = kFromUp;
      cur[j] = best;
      if (code != kFromLeft) set_back(row + j, code);
    }
  }
  std::vector<size_t> cuts(k_refs + 1, 0);
  cuts[k_refs] = n;
  size_t j = n, p = r;
  size_t k = k_refs - 1;  // the next cut walking back: c_k sits in column ends[k − 1], the end of reference k
  while (true) {
    while (k > 0 && p < ends[k - 1]) --k;
    // Walking back, the last cell seen in a boundary column is where the path entered it: the earliest cut.
    if (k > 0 && p == ends[k - 1]) cuts[k] = j;
    if (j == 0 && p == 0) break;
    const uint8_t code = get_back(static_cast<uint64_t>(p) * (n + 1) + j);
    if (code != kFromUp) --j;
    if (code != kFromLeft) --p;
  }
  return cuts;
}

Result<std::vector<std::string>> resegment(std::span<const std::string> hyp_words,
                                           const std::vector<std::string>& reference_sentences) {
  std::vector<std::vector<std::string>> refs;
  refs.reserve(reference_sentences.size());
  for (const auto& s : reference_sentences) refs.push_back(long_form_words(s));
  GPS_ASSIGN(auto cuts, resegment_cuts(hyp_words, refs));
  std::vector<std::string> segments(refs.size());
  for (size_t k = 0; k < refs.size(); ++k) {
    for (size_t j = cuts[k]; j < cuts[k + 1]; ++j) {
      if (j > cuts[k]) segments[k] += ' ';
      segments[k] += hyp_words[j];
    }
  }
  return segments;
}

Result<StreamLaal> stream_laal(std::span<const double> delays, std::span<const size_t> cuts,
                               std::span<const double> source_lengths,
                               std::span<const int64_t> reference_lengths) {
  const size_t k_refs = source_lengths.size();
  if (reference_lengths.size() != k_refs || cuts.size() != k_refs + 1 || cuts.front() != 0 ||
      cuts.back() != delays.size() || !std::is_sorted(cuts.begin(), cuts.end())) {
    return invalid_argument("StreamLAAL: " + std::to_string(cuts.size()) + " cuts, " +
                            std::to_string(k_refs) + " source lengths, " +
                            std::to_string(reference_lengths.size()) + " reference lengths and " +
                            std::to_string(delays.size()) + " delays do not describe one resegmentation");
  }
  StreamLaal out;
  out.per_sentence.resize(k_refs);
  double start = 0.0;  // s_i
  double sum = 0.0;
  size_t scored = 0;
  std::vector<double> relative;
  for (size_t i = 0; i < k_refs; ++i) {
    if (!(source_lengths[i] > 0))
      return invalid_argument("StreamLAAL: sentence " + std::to_string(i) + " has source length " +
                              python_float_repr(source_lengths[i]) + " (must be positive)");
    if (cuts[i] == cuts[i + 1]) {
      ++out.empty_sentences;
    } else {
      relative.assign(delays.begin() + static_cast<std::ptrdiff_t>(cuts[i]),
                      delays.begin() + static_cast<std::ptrdiff_t>(cuts[i + 1]));
      for (double& d : relative) d -= start;
      const double v = latency_laal(relative, source_lengths[i], static_cast<double>(reference_lengths[i]));
      out.per_sentence[i] = v;
      sum += v;
      ++scored;
    }
    start += source_lengths[i];
  }
  if (scored > 0) out.mean = sum / static_cast<double>(scored);
  return out;
}

namespace {

// Largest source length, delay or elapsed time accepted (units or ms): far beyond any real stream, small
// enough that sums stay exact in doubles for whole numbers.
constexpr double kMaxLongFormValue = 1e12;

Result<std::vector<double>> read_numbers(JsonReader& r, const std::string& key, size_t max_size, double lo,
                                         double hi) {
  GPS_ASSIGN(JsonValue v, r.require(key));
  GPS_ASSIGN(auto elems, v.elements(max_size));
  std::vector<double> out;
  out.reserve(elems.size());
  for (const auto& e : elems) {
    GPS_ASSIGN(double x, e.number(lo, hi));
    if (!out.empty() && x < out.back()) return e.error("must not be less than the value before it");
    out.push_back(x);
  }
  return out;
}

}  // namespace

Result<LongFormRun> parse_long_form_run(std::string_view text, const std::string& file) {
  if (text.size() > kMaxLongFormFileBytes)
    return out_of_range(file + ": larger than " + std::to_string(kMaxLongFormFileBytes) + " bytes");
  GPS_ASSIGN(nlohmann::json doc, parse_json_object(text, file, 4));
  GPS_ASSIGN(JsonReader root, JsonReader::open(doc, file, "", UnknownKeys::Refuse));
  LongFormRun run;
  std::string unit;
  GPS_TRY(root.required("source_unit", unit));
  if (unit == "word") {
    run.unit = LongFormUnit::Word;
  } else if (unit == "ms") {
    run.unit = LongFormUnit::Ms;
  } else {
    return root.error("source_unit", "must be \"word\" or \"ms\", got \"" + unit + "\"");
  }
  GPS_ASSIGN(JsonValue sentences_value, root.require("sentences"));
  GPS_ASSIGN(auto sentences, sentences_value.elements(kMaxLongFormSentences));
  if (sentences.empty()) return sentences_value.error("must hold at least one sentence");
  double total_source = 0.0;
  size_t reference_words = 0;
  for (const auto& s : sentences) {
    GPS_ASSIGN(JsonReader sr, s.object(UnknownKeys::Refuse));
    GPS_ASSIGN(JsonValue len_value, sr.require("source_length"));
    double len = 0.0;
    if (run.unit == LongFormUnit::Word) {
      GPS_ASSIGN(int64_t words, len_value.int64(1, static_cast<int64_t>(kMaxLongFormValue)));
      len = static_cast<double>(words);
    } else {
      GPS_ASSIGN(len, len_value.number(0, kMaxLongFormValue));
      if (!(len > 0)) return len_value.error("must be positive");
    }
    run.source_lengths.push_back(len);
    total_source += len;
    if (auto ms = sr.find("source_ms")) {
      if (run.unit == LongFormUnit::Ms)
        return ms->error("is for source_unit \"word\" (ms spans are the lengths)");
      if (run.source_ms.size() + 1 != run.source_lengths.size())
        return ms->error("must be given for every sentence or for none");
      GPS_ASSIGN(double v, ms->number(0, kMaxLongFormValue));
      if (!(v > 0)) return ms->error("must be positive");
      run.source_ms.push_back(v);
    } else if (!run.source_ms.empty()) {
      return sr.error("source_ms", "must be given for every sentence or for none");
    }
    std::string reference;
    GPS_TRY(sr.required("reference", reference));
    const size_t n_words = long_form_words(reference).size();
    if (n_words == 0) return sr.error("reference", "has no words");
    reference_words += n_words;
    if (reference_words > kMaxLongFormWords)
      return sr.error("reference",
                      "brings the references past " + std::to_string(kMaxLongFormWords) + " words");
    run.references.push_back(std::move(reference));
    GPS_TRY(sr.finish());
  }
  GPS_ASSIGN(JsonReader hr, root.required_object("hypothesis"));
  GPS_ASSIGN(JsonValue words_value, hr.require("words"));
  GPS_ASSIGN(auto words, words_value.elements(kMaxLongFormWords));
  for (const auto& w : words) {
    GPS_ASSIGN(std::string word, w.string());
    if (word.empty() || std::any_of(word.begin(), word.end(), is_ascii_space))
      return w.error("must be one word: non-empty, without whitespace");
    run.words.push_back(std::move(word));
  }
  GPS_ASSIGN(run.delays, read_numbers(hr, "delays", kMaxLongFormWords, 0, total_source));
  if (run.delays.size() != run.words.size())
    return hr.error("delays", "has " + std::to_string(run.delays.size()) + " values for " +
                                  std::to_string(run.words.size()) + " words");
  if (hr.has("elapsed")) {
    GPS_ASSIGN(run.elapsed, read_numbers(hr, "elapsed", kMaxLongFormWords, 0, kMaxLongFormValue));
    if (run.elapsed->size() != run.words.size())
      return hr.error("elapsed", "has " + std::to_string(run.elapsed->size()) + " values for " +
                                     std::to_string(run.words.size()) + " words");
    if (run.unit == LongFormUnit::Word && run.source_ms.empty())
      return root.error("sentences", "need source_ms (spans in ms) for StreamLAAL_CA when elapsed is given");
  }
  GPS_TRY(hr.finish());
  GPS_TRY(root.finish());
  return run;
}

namespace {

// One run's resegmentation and StreamLAAL (+ _CA when it has elapsed times).
struct RunSegments {
  std::vector<size_t> cuts;
  std::vector<std::string> segments;
  StreamLaal laal;
  std::optional<StreamLaal> laal_ca;
};

Result<RunSegments> segment_run(const LongFormRun& run) {
  const size_t k_refs = run.references.size();
  if (run.source_lengths.size() != k_refs || run.delays.size() != run.words.size() ||
      (run.elapsed && run.elapsed->size() != run.words.size()) ||
      (!run.source_ms.empty() && run.source_ms.size() != k_refs)) {
    return invalid_argument("long-form run: sentence or word lists of different lengths");
  }
  RunSegments out;
  std::vector<std::vector<std::string>> ref_words;
  std::vector<int64_t> ref_lengths;
  for (const auto& s : run.references) {
    ref_words.push_back(long_form_words(s));
    ref_lengths.push_back(static_cast<int64_t>(ref_words.back().size()));
  }
  GPS_ASSIGN(out.cuts, resegment_cuts(run.words, ref_words));
  out.segments.assign(k_refs, "");
  for (size_t k = 0; k < k_refs; ++k) {
    for (size_t j = out.cuts[k]; j < out.cuts[k + 1]; ++j) {
      if (j > out.cuts[k]) out.segments[k] += ' ';
      out.segments[k] += run.words[j];
    }
  }
  GPS_ASSIGN(out.laal, stream_laal(run.delays, out.cuts, run.source_lengths, ref_lengths));
  if (run.elapsed) {
    const auto& spans = run.unit == LongFormUnit::Ms ? run.source_lengths : run.source_ms;
    if (spans.size() != k_refs)
      return invalid_argument("long-form run: elapsed times need the sentences' spans in ms (source_ms)");
    GPS_ASSIGN(out.laal_ca, stream_laal(*run.elapsed, out.cuts, spans, ref_lengths));
  }
  return out;
}

// Appends one run's per-sentence LAAL_i to `pooled`; the mean is set by finish_pooled_laal.
void pool_laal(StreamLaal& pooled, const StreamLaal& run) {
  pooled.per_sentence.insert(pooled.per_sentence.end(), run.per_sentence.begin(), run.per_sentence.end());
  pooled.empty_sentences += run.empty_sentences;
}

void finish_pooled_laal(StreamLaal& pooled) {
  double sum = 0.0;
  size_t n = 0;
  for (const auto& v : pooled.per_sentence) {
    if (!v) continue;
    sum += *v;
    ++n;
  }
  pooled.mean = n > 0 ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
}

}  // namespace

Result<LongFormScores> score_long_form(const LongFormRun& run, const BleuOptions& bleu_options,
                                       const ChrfOptions& chrf_options) {
  return score_long_form(std::span<const LongFormRun>(&run, 1), bleu_options, chrf_options);
}

Result<LongFormScores> score_long_form(std::span<const LongFormRun> runs, const BleuOptions& bleu_options,
                                       const ChrfOptions& chrf_options) {
  if (runs.empty()) return invalid_argument("long-form scoring: no runs");
  LongFormScores out;
  out.cuts.push_back(0);
  std::vector<std::string> references;
  bool all_elapsed = true;
  for (const auto& run : runs) all_elapsed = all_elapsed && run.elapsed.has_value();
  if (all_elapsed) out.laal_ca.emplace();
  size_t word_offset = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    auto seg = segment_run(runs[r]);
    if (!seg.ok())
      return runs.size() == 1 ? seg.error() : seg.error().with_context("run " + std::to_string(r + 1));
    for (size_t k = 1; k < seg->cuts.size(); ++k) out.cuts.push_back(word_offset + seg->cuts[k]);
    word_offset += runs[r].words.size();
    out.segments.insert(out.segments.end(), seg->segments.begin(), seg->segments.end());
    references.insert(references.end(), runs[r].references.begin(), runs[r].references.end());
    pool_laal(out.laal, seg->laal);
    if (out.laal_ca) pool_laal(*out.laal_ca, *seg->laal_ca);
  }
  finish_pooled_laal(out.laal);
  if (out.laal_ca) finish_pooled_laal(*out.laal_ca);
  const std::vector<std::vector<std::string>> ref_streams{references};
  GPS_ASSIGN(out.bleu, corpus_bleu(out.segments, ref_streams, bleu_options));
  GPS_ASSIGN(out.chrf, corpus_chrf(out.segments, ref_streams, chrf_options));
  return out;
}

std::string format_long_form_run(const LongFormRun& run) {
  const bool words = run.unit == LongFormUnit::Word;
  auto number = [&](double v, bool integer) {
    return integer ? std::to_string(static_cast<int64_t>(std::llround(v))) : python_float_repr(v);
  };
  std::string s = std::string("{\"source_unit\": \"") + (words ? "word" : "ms") + "\", \"sentences\": [";
  for (size_t i = 0; i < run.references.size(); ++i) {
    s += i ? ",\n  " : "\n  ";
    s += "{\"source_length\": " + number(run.source_lengths[i], words);
    if (i < run.source_ms.size()) s += ", \"source_ms\": " + number(run.source_ms[i], false);
    s += ", \"reference\": " +
         nlohmann::json(run.references[i]).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "}";
  }
  s += "],\n\"hypothesis\": {\"words\": [";
  for (size_t j = 0; j < run.words.size(); ++j)
    s += (j ? ", " : "") +
         nlohmann::json(run.words[j]).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  s += "],\n\"delays\": [";
  for (size_t j = 0; j < run.delays.size(); ++j) s += (j ? ", " : "") + number(run.delays[j], words);
  s += "]";
  if (run.elapsed) {
    s += ",\n\"elapsed\": [";
    for (size_t j = 0; j < run.elapsed->size(); ++j) s += (j ? ", " : "") + number((*run.elapsed)[j], false);
    s += "]";
  }
  s += "}}\n";
  return s;
}

}  // namespace gpstream::eval
