// SimulEval's remote-agent protocol (metrics.md §A.8; SimulEval agents/service.py and
// evaluator/remote.py): one stream at a time, no session id. POST /reset starts a new sentence,
// PUT /input pushes one source Segment (JSON), GET /output answers with the target Segment produced
// since the last GET. The answer waits until the stream has consumed every input sent so far (it
// needs more source, or it finished), so each word's delay is SimulEval's step — the number of source
// segments sent — exactly as `gpstream eval` records it. Calls come from network threads; stream
// events from the engine thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "serve/engine.h"

namespace gpstream::serve {

class SimulEvalAgent {
 public:
  // options: the stream settings (the model's defaults, as `gpstream eval` uses).
  SimulEvalAgent(Engine& engine, ResolvedOptions options);
  ~SimulEvalAgent();

  // GET /: {"info": "..."}.
  std::string info() const;
  // POST /reset: drops the current stream and opens a new one.
  Status reset();
  // PUT /input: one Segment JSON ({"index", "content", "finished", "is_empty", "data_type", ...}).
  Status input(std::string_view body);
  // GET /output: calls reply(segment JSON) once the stream is idle or finished (possibly at once, or
  // later on the engine thread). A second call while one waits answers the first with an empty segment.
  void output(std::function<void(std::string)> reply);
  // Closes the stream when nothing happened for `idle_ms` (a client that went away).
  void expire_if_idle(double idle_ms);

 private:
  void on_event(uint64_t generation, const StreamEvent& e);
  // Answers a waiting GET /output if the stream is ready; returns the reply to call outside the lock.
  std::function<void()> take_ready_locked();
  Status open_locked();

  Engine& engine_;
  ResolvedOptions options_;
  mutable std::mutex mu_;
  uint64_t stream_ = 0;       // 0: none
  uint64_t generation_ = 0;   // events of older streams are ignored
  int64_t inputs_sent_ = 0;   // push/end commands sent to the engine
  int64_t inputs_idle_ = -1;  // inputs_applied of the latest Idle event
  bool end_sent_ = false;
  bool finished_ = false;
  std::string error_;
  std::vector<std::string> words_;  // produced since the last GET /output
  std::function<void(std::string)> waiting_;
  double last_activity_ms_ = 0;
};

// A text Segment as SimulEval's remote client sends it (PUT /input): {"index", "content", "finished",
// "is_empty", "data_type", ...}. Unknown fields are ignored (SimulEval adds some over versions); an empty
// segment has no content; a data_type other than "text" is Unsupported; wrong types are errors.
struct SimulEvalTextSegment {
  std::string content;
  bool finished = false;
};
Result<SimulEvalTextSegment> parse_simuleval_segment(std::string_view body);

// Segment JSON with the fields, in order, of SimulEval's Segment.json() (json.dumps of the dataclass
// fields), written as every reply is (reply_text: without spaces).
std::string simuleval_text_segment(const std::string& content, bool finished);
std::string simuleval_empty_segment(bool finished);

}  // namespace gpstream::serve
