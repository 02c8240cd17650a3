// The web demo's static files: a request path maps to a file directly inside the web root (no
// subdirectories, no dot files, so no path can leave the root), with its Content-Type. Files are read
// per request; the demo is a handful of small files and needs no build step.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpstream::serve {

struct StaticFile {
  std::string body;
  std::string content_type;
};

// "/" → index.html; "/app.js" → app.js. std::nullopt: not a servable name or no such file.
std::optional<StaticFile> load_static_file(const std::string& root, std::string_view target);

}  // namespace gpstream::serve
