// Per-client quotas: how many streams one client may hold at once (gpstream serve
// --max-sessions-per-client), so that one client cannot take every session of the server. A client is
// its API key when keys are in use, else its remote address. A Lease holds one slot until destroyed.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace gpstream::serve {

class ClientQuota {
 public:
  explicit ClientQuota(int max_per_client) : max_per_client_(max_per_client) {}
  ClientQuota(const ClientQuota&) = delete;
  ClientQuota& operator=(const ClientQuota&) = delete;

  // One slot of `client`'s; the slot returns when the last copy of the lease is destroyed. The quota
  // must outlive its leases.
  using Lease = std::shared_ptr<void>;
  // A lease, or null when `client` already holds max_per_client slots. Thread-safe.
  Lease acquire(const std::string& client);

  int held(const std::string& client) const;
  int max_per_client() const { return max_per_client_; }

 private:
  void release(const std::string& client);

  const int max_per_client_;
  mutable std::mutex mu_;
  std::map<std::string, int> held_;  // clients holding at least one slot (bounded by the open connections)
};

}  // namespace gpstream::serve
