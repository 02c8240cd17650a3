// See client_quota.h.
#include "serve/client_quota.h"

namespace gpstream::serve {

ClientQuota::Lease ClientQuota::acquire(const std::string& client) {
  {
    std::lock_guard lock(mu_);
    int& held = held_[client];
    if (held >= max_per_client_) {
      if (held == 0) held_.erase(client);
      return nullptr;
    }
    ++held;
  }
  // The deleter returns the slot; the pointer itself only marks the lease as held.
  return Lease(this, [this, client](void*) { release(client); });
}

int ClientQuota::held(const std::string& client) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  return it == held_.end() ? 0 : it->second;
}

void ClientQuota::release(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  if (it == held_.end()) return;
  if (--it->second <= 0) held_.erase(it);
}

}  // namespace gpstream::serve
