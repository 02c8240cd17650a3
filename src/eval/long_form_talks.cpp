// Talks for long-form evaluation and their translation as one stream (see long_form_talks.h).
#include "eval/long_form_talks.h"

#include <algorithm>
#include <cmath>

#include "tokenizer/segment_encoder.h"
#include "tokenizer/unicode.h"

namespace gpstream::eval {

std::string strip_punctuation(std::string_view text) {
  std::string out;
  for (const std::string& word : tokenizer::split_words(text)) {
    // Byte offsets of the first and one past the last code point that is a letter, mark or digit.
    size_t first = word.size(), end = 0;
    for (size_t i = 0; i < word.size();) {
      const size_t at = i;
      const size_t len = tokenizer::valid_sequence_length(word, i);
      if (len == 0) {  // an ill-formed byte is kept, as part of the word
        first = std::min(first, at);
        end = ++i;
        continue;
      }
      const char32_t cp = tokenizer::next_code_point(word, i);
      if (tokenizer::is_letter_mark_or_digit(cp)) {
        first = std::min(first, at);
        end = i;
      }
    }
    if (first >= end) continue;
    if (!out.empty()) out += ' ';
    out.append(word, first, end - first);
  }
  return out;
}

Talks build_talks(const std::vector<TestPair>& pairs, double min_minutes, double pace_words_per_s) {
  Talks out;
  const double min_words = min_minutes * 60.0 * pace_words_per_s;
  std::vector<TestPair> talk;
  double talk_words = 0;
  for (const TestPair& p : pairs) {
    const size_t n = tokenizer::split_words(p.source).size();
    if (n == 0 || long_form_words(p.reference).empty()) {
      ++out.skipped;
      continue;
    }
    talk.push_back(p);
    talk_words += static_cast<double>(n);
    if (talk_words >= min_words) {
      out.talks.push_back(std::move(talk));
      talk.clear();
      talk_words = 0;
    }
  }
  if (!talk.empty()) {
    if (out.talks.empty())
      out.talks.push_back(std::move(talk));
    else
      out.talks.back().insert(out.talks.back().end(), talk.begin(), talk.end());
  }
  return out;
}

Result<LongFormRun> translate_talk(model::ForwardModel& model, const stream::SegmentCodec& codec,
                                   const stream::SessionOptions& session_options,
                                   const std::vector<TestPair>& talk, double pace_words_per_s,
                                   const std::function<void(size_t, size_t)>& progress) {
  if (!(pace_words_per_s > 0)) return invalid_argument("a long-form run needs a speaking pace above 0");
  const double word_ms = 1000.0 / pace_words_per_s;
  LongFormRun run;
  run.unit = LongFormUnit::Word;
  std::string line;
  for (const TestPair& p : talk) {
    const std::vector<std::string> words = tokenizer::split_words(p.source);
    for (const std::string& w : words) line += (line.empty() ? "" : " ") + w;
    run.source_lengths.push_back(static_cast<double>(words.size()));
    run.source_ms.push_back(static_cast<double>(words.size()) * word_ms);
    run.references.push_back(p.reference);
  }
  SimultaneousOptions options;
  options.pace_words_per_s = pace_words_per_s;
  options.read_whole_line = true;
  options.progress = progress;
  GPS_ASSIGN(InstanceRecord rec, evaluate_sentence(model, codec, session_options, {line, ""}, options));
  // The record's words are the prediction's, one space apart; a paced record's delays are words × word_ms,
  // so the word counts come back exactly by rounding.
  const std::vector<std::string> words = long_form_words(rec.prediction);
  if (words.size() != rec.delays.size())
    return invalid_argument("long-form run: " + std::to_string(words.size()) + " words but " +
                            std::to_string(rec.delays.size()) + " delays");
  run.words = words;
  run.elapsed.emplace();
  for (size_t j = 0; j < words.size(); ++j) {
    run.delays.push_back(std::round(rec.delays[j] / word_ms));
    run.elapsed->push_back(rec.elapsed[j]);
  }
  return run;
}

}  // namespace gpstream::eval
