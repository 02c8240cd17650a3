// Where the gpstream binary finds its data (the web demo page, the shipped models) without any path
// compiled in: beside the binary as `cmake --install` lays it out (PREFIX/bin/gpstream and
// PREFIX/share/gpstream/{web,models}), or in the build tree (BUILD/gpstream and BUILD/share/gpstream, which
// CMake fills with copies of web/ and a link to models/). The binary keeps working when the source tree
// is removed.
#pragma once

#include <string>

namespace gpstream::cli {

// The folder of the running executable ("" if /proc/self/exe cannot be read).
std::string executable_dir();
// PREFIX/share/gpstream or BUILD/share/gpstream, whichever exists beside the executable ("" if none).
std::string data_dir();
// data_dir()/web ("" when there is no data folder).
std::string web_dir();
// A -m argument: itself if it names an existing path, else data_dir()/models/NAME if that exists (so
// `-m gpstream-en-fr` finds the shipped model wherever gpstream is installed), else itself unchanged.
std::string resolve_model_name(std::string name);

}  // namespace gpstream::cli
