// SimulEval remote agent over the engine.
#include "serve/simuleval_agent.h"

#include <nlohmann/json.hpp>

#include "serve/stream_protocol.h"
#include "util/json_text.h"

namespace gpstream::serve {

std::string simuleval_text_segment(const std::string& content, bool finished) {
  return reply_text({{"index", 0},
                     {"content", content},
                     {"finished", finished},
                     {"is_empty", false},
                     {"data_type", "text"},
                     {"tgt_lang", nullptr}});
}

std::string simuleval_empty_segment(bool finished) {
  return reply_text({{"index", 0},
                     {"content", nlohmann::ordered_json::array()},
                     {"finished", finished},
                     {"is_empty", true},
                     {"data_type", nullptr},
                     {"tgt_lang", nullptr}});
}

SimulEvalAgent::SimulEvalAgent(Engine& engine, ResolvedOptions options)
    : engine_(engine), options_(std::move(options)), last_activity_ms_(steady_now_ms()) {}

SimulEvalAgent::~SimulEvalAgent() {
  std::lock_guard lock(mu_);
  if (stream_) engine_.close(stream_);
}

std::string SimulEvalAgent::info() const {
  const auto& so = options_.session;
  std::string s = "gpstream[text -> text] " + options_.source_lang + "-" + options_.target_lang +
                  " paradigm=" + stream::paradigm_name(so.paradigm) + " k=" + std::to_string(so.k) +
                  " phi=" + so.phi.to_string();
  return reply_text({{"info", s}});
}

Status SimulEvalAgent::open_locked() {
  if (stream_) engine_.close(stream_);
  stream_ = 0;
  const uint64_t gen = ++generation_;
  inputs_sent_ = 0;
  inputs_idle_ = -1;
  end_sent_ = false;
  finished_ = false;
  error_.clear();
  words_.clear();
  auto id = engine_.open(options_, [this, gen](const StreamEvent& e) { on_event(gen, e); });
  if (!id) return id.error();
  stream_ = *id;
  return {};
}

Status SimulEvalAgent::reset() {
  std::function<void()> answer;
  Status st;
  {
    std::lock_guard lock(mu_);
    last_activity_ms_ = steady_now_ms();
    if (waiting_) {  // a GET still waiting on the old sentence gets an empty, finished segment
      answer = [w = std::move(waiting_)] { w(simuleval_empty_segment(true)); };
      waiting_ = nullptr;
    }
    st = open_locked();
  }
  if (answer) answer();
  return st;
}

Result<SimulEvalTextSegment> parse_simuleval_segment(std::string_view body) {
  using nlohmann::json;
  auto parsed = parse_json_bounded(body, "segment", kMaxClientJsonDepth);
  if (!parsed) return invalid_argument(parsed.error().message());
  json seg = std::move(*parsed);
  if (!seg.is_object()) return invalid_argument("segment: expected a JSON object");
  SimulEvalTextSegment out;
  if (seg.contains("finished")) {
    if (!seg["finished"].is_boolean()) return invalid_argument("segment 'finished': expected true or false");
    out.finished = seg["finished"].get<bool>();
  }
  bool is_empty = false;
  if (seg.contains("is_empty")) {
    if (!seg["is_empty"].is_boolean()) return invalid_argument("segment 'is_empty': expected true or false");
    is_empty = seg["is_empty"].get<bool>();
  }
  const json* type = seg.contains("data_type") ? &seg["data_type"] : nullptr;
  if (type && type->is_string() && type->get<std::string>() != "text")
    return unsupported("segment 'data_type': this agent takes text, got '" + type->get<std::string>() + "'");
  if (type && !type->is_string() && !type->is_null())
    return invalid_argument("segment 'data_type': expected a string");
  if (!is_empty && seg.contains("content")) {
    const json& c = seg["content"];
    if (c.is_string())
      out.content = c.get<std::string>();
    else if (!(c.is_array() && c.empty()))
      return invalid_argument("segment 'content': expected a string");
  }
  return out;
}

Status SimulEvalAgent::input(std::string_view body) {
  GPS_ASSIGN(SimulEvalTextSegment segment, parse_simuleval_segment(body));
  const std::string& content = segment.content;
  const bool finished = segment.finished;
  std::lock_guard lock(mu_);
  last_activity_ms_ = steady_now_ms();
  if (!stream_ && !finished_) GPS_TRY(open_locked());  // a client that skipped POST /reset
  if (finished_ || end_sent_) {
    if (!content.empty()) return invalid_argument("segment after the end of the source (POST /reset first)");
    return {};
  }
  if (!content.empty()) {
    engine_.push(stream_, content + " ");  // one SimulEval text segment is one word
    ++inputs_sent_;
  }
  if (finished) {
    engine_.end(stream_);
    ++inputs_sent_;
    end_sent_ = true;
  }
  return {};
}

void SimulEvalAgent::output(std::function<void(std::string)> reply) {
  std::function<void()> previous, ready;
  {
    std::lock_guard lock(mu_);
    last_activity_ms_ = steady_now_ms();
    if (waiting_) previous = [w = std::move(waiting_)] { w(simuleval_empty_segment(false)); };
    if (!stream_ && !finished_) {
      ready = [reply = std::move(reply)] { reply(simuleval_empty_segment(true)); };
    } else {
      waiting_ = std::move(reply);
      ready = take_ready_locked();
    }
  }
  if (previous) previous();
  if (ready) ready();
}

std::function<void()> SimulEvalAgent::take_ready_locked() {
  if (!waiting_) return nullptr;
  if (!finished_ && inputs_idle_ != inputs_sent_) return nullptr;
  std::string content;
  for (size_t i = 0; i < words_.size(); ++i) content.append(i ? " " : "").append(words_[i]);
  words_.clear();
  std::string seg =
      content.empty() ? simuleval_empty_segment(finished_) : simuleval_text_segment(content, finished_);
  return [w = std::move(waiting_), seg = std::move(seg)] { w(seg); };
}

void SimulEvalAgent::on_event(uint64_t generation, const StreamEvent& e) {
  std::function<void()> ready;
  {
    std::lock_guard lock(mu_);
    if (generation != generation_) return;
    switch (e.kind) {
      case StreamEventKind::Word:
        words_.push_back(e.word);
        break;
      case StreamEventKind::Idle:
        inputs_idle_ = e.inputs_applied;
        break;
      case StreamEventKind::SegmentEnd:
      case StreamEventKind::Tentative:
        break;
      case StreamEventKind::Finished:
        finished_ = true;
        stream_ = 0;
        break;
      case StreamEventKind::Error:
        finished_ = true;
        stream_ = 0;
        error_ = e.error_message;
        break;
    }
    ready = take_ready_locked();
  }
  if (ready) ready();
}

void SimulEvalAgent::expire_if_idle(double idle_ms) {
  std::lock_guard lock(mu_);
  if (stream_ && !waiting_ && steady_now_ms() - last_activity_ms_ > idle_ms) {
    engine_.close(stream_);
    stream_ = 0;
    ++generation_;
    finished_ = true;
  }
}

}  // namespace gpstream::serve
