// Data folders found relative to the executable (see install_paths.h).
#include "cli/install_paths.h"

#include <filesystem>
#include <system_error>

namespace gpstream::cli {
namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string data_dir() {
  const std::string exe = executable_dir();
  if (exe.empty()) return "";
  for (const fs::path& candidate :
       {fs::path(exe) / ".." / "share" / "gpstream", fs::path(exe) / "share" / "gpstream"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return "";
}

std::string web_dir() {
  const std::string d = data_dir();
  return d.empty() ? std::string() : (fs::path(d) / "web").string();
}

std::string resolve_model_name(std::string name) {
  std::error_code ec;
  if (name.empty() || fs::exists(name, ec) || name.find('/') != std::string::npos) return name;
  const std::string d = data_dir();
  if (d.empty()) return name;
  const fs::path installed = fs::path(d) / "models" / name;
  return fs::exists(installed, ec) ? installed.string() : name;
}

}  // namespace gpstream::cli
