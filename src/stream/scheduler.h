// Scheduler: steps many Sessions together. Each round it advances every session's state machine,
// packs all pending work (source chunks, single target tokens, re-feeds) into ONE batched forward —
// every session is its own sequence with its own cache — and hands each session its logits row.
// Sessions join and leave at any time. The Scheduler only batches: it owns no weights and decodes nothing.
// Fair sharing: a session forwards at most max_rows_per_session rows in a round (a long sentence's source is
// forwarded in pieces over several rounds), so one round — the wait of every other session's next token —
// costs at most (sessions × max_rows_per_session) rows of forward, whatever one session has to read. A
// caller may lower one session's share (set_max_rows), e.g. for a stream that is ahead of real time.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "stream/session.h"

namespace gpstream::stream {

class Scheduler {
 public:
  static constexpr int kDefaultMaxRowsPerSession = 64;

  explicit Scheduler(model::ForwardModel& model, int max_rows_per_session = kDefaultMaxRowsPerSession)
      : model_(model), max_rows_per_session_(max_rows_per_session) {}

  // Adds a session (not owned); returns its handle.
  int add(Session* session);
  void remove(int handle);
  size_t size() const;
  // The rows `handle` may forward per round from now on (at least 1; the constructor's value by default).
  void set_max_rows(int handle, int max_rows);

  // One round: poll every session, run one batched forward over all pending work, complete it.
  // Events produced by the round are passed to on_event(handle, event). Returns the number of
  // sessions that took part in the forward (0: nothing to do — all are waiting or finished).
  Result<int> round(const std::function<void(int, const Event&)>& on_event);
  // The handles that took part in the last round's forward.
  const std::vector<int>& last_round_members() const { return members_; }

 private:
  model::ForwardModel& model_;
  int max_rows_per_session_;
  std::vector<Session*> sessions_;  // index = handle; null = removed
  std::vector<int> max_rows_;       // index = handle
  std::vector<int> members_;
  std::vector<float> logits_;
};

}  // namespace gpstream::stream
