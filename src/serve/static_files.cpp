// Static file lookup for the web demo.
#include "serve/static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpstream::serve {
namespace {

constexpr size_t kMaxFileBytes = 4 << 20;

const char* content_type(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".json")) return "application/json";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".ico")) return "image/x-icon";
  return nullptr;
}

}  // namespace

std::optional<StaticFile> load_static_file(const std::string& root, std::string_view target) {
  if (root.empty()) return std::nullopt;
  const size_t q = target.find_first_of("?#");
  if (q != std::string_view::npos) target = target.substr(0, q);
  if (target.empty() || target[0] != '/') return std::nullopt;
  std::string_view name = target.substr(1);
  if (name.empty()) name = "index.html";
  if (name.size() > 128 || name[0] == '.') return std::nullopt;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    if (!ok) return std::nullopt;
  }
  const char* type = content_type(name);
  if (!type) return std::nullopt;
  const std::filesystem::path path = std::filesystem::path(root) / std::string(name);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) > kMaxFileBytes)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return StaticFile{ss.str(), type};
}

}  // namespace gpstream::serve
