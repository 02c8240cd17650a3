// gpstream's version string ("0.1.0"), as `gpstream version` prints it and run records carry it.
#pragma once

namespace gpstream {

const char* version();

}  // namespace gpstream
