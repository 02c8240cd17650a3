// Driving sessions over a test set, SimulEval-style.
#include "eval/simultaneous.h"

#include <fstream>

#include "eval/text_lines.h"
#include "tokenizer/segment_encoder.h"
#include "util/clock.h"
#include "util/mapped_file.h"

namespace gpstream::eval {

Result<std::vector<TestPair>> read_test_tsv(const std::string& path) {
  GPS_ASSIGN(std::string text, read_text_file(path));
  std::vector<TestPair> pairs;
  auto lines = split_crlf_lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    const size_t tab = lines[n].find('\t');
    if (tab == std::string::npos)
      return format_error(path + ":" + std::to_string(n + 1) + ": expected source<TAB>reference");
    pairs.push_back({lines[n].substr(0, tab), lines[n].substr(tab + 1)});
  }
  return pairs;
}

Result<std::vector<TestPair>> read_test_files(const std::string& source, const std::string& reference) {
  GPS_ASSIGN(std::string s, read_text_file(source));
  GPS_ASSIGN(std::string r, read_text_file(reference));
  auto sl = split_crlf_lines(s), rl = split_crlf_lines(r);
  if (sl.size() != rl.size())
    return invalid_argument(source + " has " + std::to_string(sl.size()) + " lines but " + reference +
                            " has " + std::to_string(rl.size()));
  std::vector<TestPair> pairs;
  for (size_t i = 0; i < sl.size(); ++i) pairs.push_back({sl[i], rl[i]});
  return pairs;
}

Result<InstanceRecord> evaluate_sentence(model::ForwardModel& model, const stream::SegmentCodec& codec,
                                         const stream::SessionOptions& session_options, const TestPair& pair,
                                         const SimultaneousOptions& options) {
  const double word_ms = options.pace_words_per_s > 0 ? 1000.0 / options.pace_words_per_s : 0.0;
  // Virtual clock: real time plus the waits for the speaker.
  double offset = 0;
  const double start = steady_ms();
  auto clock = [&] { return steady_ms() - start + offset; };
  stream::SessionOptions so = session_options;
  so.clock = clock;
  so.continuous = options.read_whole_line;
  GPS_ASSIGN(auto session, stream::Session::create(model, codec, so));
  const std::vector<std::string> words = tokenizer::split_words(pair.source);
  InstanceRecord rec;
  rec.source = [&] {
    std::string s;
    for (size_t i = 0; i < words.size(); ++i) s += (i ? " " : "") + words[i];
    return s;
  }();
  rec.reference = pair.reference;
  const bool paced = word_ms > 0;
  rec.delays_int = !paced;
  rec.elapsed_int = false;
  rec.source_length = paced ? static_cast<double>(words.size()) * word_ms : static_cast<double>(words.size());
  rec.source_length_int = !paced;
  size_t pushed = 0;
  std::vector<std::string> out;
  std::vector<bool> end_read;  // per word: Event::segment_end_read
  for (;;) {
    GPS_ASSIGN(stream::Event e, session->step());
    if (e.kind == stream::EventKind::NeedSource) {
      if (pushed < words.size()) {
        if (paced) {
          const double arrival = static_cast<double>(pushed + 1) * word_ms;  // word i heard at i·1000/W
          if (arrival > clock()) offset += arrival - clock();
        }
        GPS_TRY(session->push_source(words[pushed++]));
        if (options.progress) options.progress(pushed, words.size());
      } else {
        GPS_TRY(session->end_source());
      }
    } else if (e.kind == stream::EventKind::Word) {
      out.push_back(e.word);
      rec.delays.push_back(paced ? e.stream_delay * word_ms : e.stream_delay);
      rec.elapsed.push_back(clock());
      rec.unit_delays.push_back(e.stream_delay);
      end_read.push_back(e.segment_end_read);
    } else if (e.kind == stream::EventKind::Finished) {
      break;
    }
  }
  if (const int read = session->stream_words_read(); so.continuous && read < static_cast<int>(words.size()))
    return invalid_argument("the model left " + std::to_string(words.size() - read) + " of the line's " +
                            std::to_string(words.size()) + " words unread, from '" + words[read] + "'");
  // The end marker counts as a unit where it follows the line's last word (the paper's source length is the
  // line's words plus its end).
  for (size_t i = 0; i < end_read.size(); ++i)
    if (end_read[i] && rec.unit_delays[i] == static_cast<double>(words.size())) rec.unit_delays[i] += 1;
  for (size_t i = 0; i < out.size(); ++i) rec.prediction += (i ? " " : "") + out[i];
  rec.prediction_length = static_cast<int64_t>(out.size());
  return rec;
}

Result<std::vector<InstanceRecord>> evaluate_corpus(model::ForwardModel& model,
                                                    const stream::SegmentCodec& codec,
                                                    const stream::SessionOptions& session_options,
                                                    const std::vector<TestPair>& pairs,
                                                    const SimultaneousOptions& options,
                                                    const std::function<void(size_t, size_t)>& progress) {
  std::vector<InstanceRecord> records;
  records.reserve(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    auto r = evaluate_sentence(model, codec, session_options, pairs[i], options);
    if (!r.ok()) return r.error().with_context("sentence " + std::to_string(i + 1));
    r->index = static_cast<int64_t>(i);
    records.push_back(std::move(r).value());
    if (progress) progress(i + 1, pairs.size());
  }
  return records;
}

}  // namespace gpstream::eval
