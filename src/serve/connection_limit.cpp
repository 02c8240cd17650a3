// The connection limit's default and the accept errors that call for a pause (connection_limit.h).
#include "serve/connection_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

namespace gpstream::serve {

int max_connections_for_descriptor_limit(long long soft_limit) {
  if (soft_limit < 0) return kDefaultMaxConnections;
  const long long usable = soft_limit - kReservedDescriptors - kMaxRefusalsInFlight;
  return static_cast<int>(std::clamp<long long>(usable, 1, kDefaultMaxConnections));
}

int default_max_connections() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return max_connections_for_descriptor_limit(-1);
  return max_connections_for_descriptor_limit(static_cast<long long>(limit.rlim_cur));
}

bool is_resource_exhaustion(int e) {
  return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

}  // namespace gpstream::serve
