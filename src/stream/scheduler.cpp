// Batched stepping of many sessions.
#include "stream/scheduler.h"

#include <algorithm>

namespace gpstream::stream {

int Scheduler::add(Session* session) {
  for (size_t i = 0; i < sessions_.size(); ++i)
    if (!sessions_[i]) {
      sessions_[i] = session;
      max_rows_[i] = max_rows_per_session_;
      return static_cast<int>(i);
    }
  sessions_.push_back(session);
  max_rows_.push_back(max_rows_per_session_);
  return static_cast<int>(sessions_.size()) - 1;
}

void Scheduler::set_max_rows(int handle, int max_rows) {
  if (handle >= 0 && static_cast<size_t>(handle) < max_rows_.size())
    max_rows_[handle] = std::max(1, max_rows);
}

void Scheduler::remove(int handle) {
  if (handle >= 0 && static_cast<size_t>(handle) < sessions_.size()) sessions_[handle] = nullptr;
}

size_t Scheduler::size() const {
  size_t n = 0;
  for (Session* s : sessions_) n += s != nullptr;
  return n;
}

Result<int> Scheduler::round(const std::function<void(int, const Event&)>& on_event) {
  model::Batch batch;
  std::vector<int>& members = members_;
  members.clear();
  std::vector<model::KvCache*> caches;
  for (size_t h = 0; h < sessions_.size(); ++h) {
    Session* s = sessions_[h];
    if (!s || (s->finished() && !s->has_event())) continue;  // finished sessions stay quiet
    GPS_ASSIGN(bool pending, s->poll());
    while (s->has_event()) on_event(static_cast<int>(h), s->pop_event());
    if (!pending) continue;
    s->prepare(batch, static_cast<int>(caches.size()), max_rows_[h]);
    caches.push_back(&s->cache());
    members.push_back(static_cast<int>(h));
  }
  if (members.empty()) return 0;
  GPS_TRY(model_.forward(batch, caches, logits_));
  const int64_t V = model_.config().n_vocab;
  int64_t row = 0;
  int tapped = 0;  // rows that asked for their attention, in batch order
  for (int h : members) {
    Session* s = sessions_[h];
    const bool wants = s->prepared_wants_logits();
    const std::span<const float> attention =
        s->prepared_wants_attention() ? model_.source_attention(tapped++) : std::span<const float>();
    GPS_TRY(s->complete(wants ? logits_.data() + row * V : nullptr, attention));
    row += wants;
    while (s->has_event()) on_event(h, s->pop_event());
  }
  return static_cast<int>(members.size());
}

}  // namespace gpstream::stream
