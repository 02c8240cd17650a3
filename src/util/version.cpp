// Library version string.
#include "util/version.h"

namespace gpstream {
const char* version() {
  return "0.1.0";
}
}  // namespace gpstream
