// POST /v1/translate over the engine.
#include "serve/translate_request.h"

#include <cmath>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "eval/instance_log.h"
#include "eval/scores.h"
#include "serve/error_status.h"
#include "serve/stream_protocol.h"
#include "tokenizer/segment_encoder.h"
#include "util/json_text.h"

namespace gpstream::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr size_t kConcurrentLines = 4;  // sentences of one request in flight at once

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string::npos) j = text.size();
    std::string line = text.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    i = j + 1;
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // a final newline ends the last line
  return lines;
}

struct Job {
  Engine* engine = nullptr;
  TranslateRequest request;
  ResolvedOptions options;
  std::function<void(int, std::string)> done;
  std::mutex mu;
  size_t next = 0, finished = 0;
  bool failed = false;
  std::vector<eval::InstanceRecord> records;
  std::vector<uint64_t> ids;
};

// Scores by name, in order: ints as ints, floats as nlohmann's shortest round-trip digits (the same double
// as Python's repr), null when not finite.
ordered_json scores_json(const eval::NamedScores& scores) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, x] : scores) {
    if (!std::isfinite(x.value))
      j[name] = nullptr;
    else if (x.is_int)
      j[name] = static_cast<int64_t>(x.value);
    else
      j[name] = x.value;
  }
  return j;
}

Result<eval::NamedScores> score(const std::vector<eval::InstanceRecord>& records, bool with_reference) {
  eval::ScoreOptions so;
  so.quality = with_reference;
  so.latency.use_ref_len = with_reference;
  GPS_ASSIGN(eval::ScoreResult r, eval::score_instances(records, so));
  return r.scores;
}

void finish(const std::shared_ptr<Job>& job) {
  const bool with_ref = job->request.reference.has_value();
  std::string all;
  for (size_t i = 0; i < job->records.size(); ++i)
    all.append(i ? "\n" : "").append(job->records[i].prediction);
  ordered_json sentences = ordered_json::array();
  bool any_scored = false;
  for (const eval::InstanceRecord& r : job->records) {
    // Words are the prediction split on spaces (a target word never contains one).
    ordered_json words = ordered_json::array();
    size_t start = 0;
    for (size_t p = 0; p <= r.prediction.size(); ++p) {
      if (p == r.prediction.size() || r.prediction[p] == ' ') {
        if (p > start) words.push_back(r.prediction.substr(start, p - start));
        start = p + 1;
      }
    }
    ordered_json delays = ordered_json::array(), elapsed = ordered_json::array();
    for (size_t d = 0; d < r.delays.size(); ++d) {
      delays.push_back(static_cast<int64_t>(r.delays[d]));
      elapsed.push_back(ms_value(r.elapsed[d]));
    }
    ordered_json scores = ordered_json::object();
    if (!r.delays.empty()) {
      if (auto s = score({r}, with_ref)) scores = scores_json(*s);
      any_scored = true;
    }
    sentences.push_back({{"source", r.source},
                         {"translation", r.prediction},
                         {"words", std::move(words)},
                         {"delays", std::move(delays)},
                         {"elapsed_ms", std::move(elapsed)},
                         {"scores", std::move(scores)}});
  }
  ordered_json scores = ordered_json::object();
  if (any_scored) {
    if (auto s = score(job->records, with_ref)) scores = scores_json(*s);
  }
  const ordered_json body = {
      {"translation", all}, {"sentences", std::move(sentences)}, {"scores", std::move(scores)}};
  job->done(200, reply_text(body));
}

void start_next(const std::shared_ptr<Job>& job);

void on_event(const std::shared_ptr<Job>& job, size_t line, const StreamEvent& e) {
  bool all_done = false, start_more = false;
  {
    std::lock_guard lock(job->mu);
    if (job->failed) return;
    eval::InstanceRecord& r = job->records[line];
    switch (e.kind) {
      case StreamEventKind::Word:
        r.prediction.append(r.prediction.empty() ? "" : " ").append(e.word);
        ++r.prediction_length;
        r.delays.push_back(e.stream_delay);  // from the line's first word, over all its sentences
        r.elapsed.push_back(e.stream_elapsed_ms);
        return;
      case StreamEventKind::Idle:
      case StreamEventKind::SegmentEnd:
      case StreamEventKind::Tentative:
        return;
      case StreamEventKind::Error: {
        job->failed = true;
        for (uint64_t id : job->ids) job->engine->close(id);
        auto done = std::move(job->done);
        job->done = nullptr;
        done(http_status_for_error(e.error_code),
             error_event(e.error_code, "line " + std::to_string(line + 1) + ": " + e.error_message));
        return;
      }
      case StreamEventKind::Finished:
        ++job->finished;
        all_done = job->finished == job->records.size();
        start_more = job->next < job->records.size();
        break;
    }
  }
  if (start_more) start_next(job);
  if (all_done) finish(job);
}

// Opens the next line's stream (called with no lock held).
void start_next(const std::shared_ptr<Job>& job) {
  size_t line;
  {
    std::lock_guard lock(job->mu);
    if (job->failed || job->next >= job->records.size()) return;
    line = job->next++;
  }
  auto id = job->engine->open(job->options, [job, line](const StreamEvent& e) { on_event(job, line, e); });
  if (!id) {
    std::function<void(int, std::string)> done;
    {
      std::lock_guard lock(job->mu);
      if (job->failed) return;
      job->failed = true;
      for (uint64_t other : job->ids) job->engine->close(other);
      done = std::move(job->done);
    }
    done(503, error_event("busy", id.error().message()));
    return;
  }
  {
    std::lock_guard lock(job->mu);
    job->ids.push_back(*id);
  }
  job->engine->push(*id, job->request.lines[line]);
  job->engine->end(*id);
}

}  // namespace

Result<TranslateRequest> parse_translate_request(std::string_view body, size_t max_lines) {
  auto parsed = parse_json_bounded(body, "request body", kMaxClientJsonDepth);
  if (!parsed) return invalid_argument(parsed.error().message());
  json req = std::move(*parsed);
  if (!req.is_object()) return invalid_argument("request body must be a JSON object");
  TranslateRequest r;
  GPS_ASSIGN(r.options, parse_stream_options(req, {"text", "reference"}));
  if (r.options.continuous)
    return invalid_argument("unknown field 'continuous' (each line is translated sentence by sentence)");
  if (!req.contains("text")) return invalid_argument("request has no 'text'");
  if (!req["text"].is_string()) return invalid_argument("'text': expected a string");
  r.lines = split_lines(req["text"].get<std::string>());
  if (r.lines.size() > max_lines)
    return invalid_argument("'text': " + std::to_string(r.lines.size()) + " lines, at most " +
                            std::to_string(max_lines));
  if (req.contains("reference")) {
    if (!req["reference"].is_string()) return invalid_argument("'reference': expected a string");
    r.reference = split_lines(req["reference"].get<std::string>());
    if (r.reference->size() != r.lines.size())
      return invalid_argument("'reference' has " + std::to_string(r.reference->size()) +
                              " lines but 'text' has " + std::to_string(r.lines.size()));
  }
  return r;
}

void run_translate(Engine& engine, TranslateRequest request, std::function<void(int, std::string)> done) {
  // Each line is a continuous stream: all its sentences are translated, none dropped.
  auto resolved = engine.resolve(request.options, true);
  if (!resolved) return done(400, error_event("bad_request", resolved.error().message()));
  auto job = std::make_shared<Job>();
  job->engine = &engine;
  job->options = *resolved;
  job->done = std::move(done);
  job->request = std::move(request);
  job->records.resize(job->request.lines.size());
  for (size_t i = 0; i < job->records.size(); ++i) {
    eval::InstanceRecord& r = job->records[i];
    r.index = static_cast<int64_t>(i);
    const auto words = tokenizer::split_words(job->request.lines[i]);
    for (size_t w = 0; w < words.size(); ++w) r.source.append(w ? " " : "").append(words[w]);
    r.source_length = static_cast<double>(words.size());
    r.elapsed_int = false;
    if (job->request.reference) r.reference = (*job->request.reference)[i];
  }
  for (size_t i = 0; i < kConcurrentLines; ++i) start_next(job);
}

}  // namespace gpstream::serve
