// Run-folder helpers shared by the training loops (run_folder.h).
#include "train/run_folder.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>

#include "train/checkpoint.h"
#include "util/mapped_file.h"
#include "util/splitmix64.h"

namespace gpstream::train {

uint64_t mix_seed(uint64_t x) {
  return splitmix64_mix(x);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status write_text_file(const std::string& path, const std::string& text) {
  return write_file_atomic(
      path, std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

Result<std::string> resolve_resume_checkpoint(const std::string& resume) {
  if (!std::filesystem::is_directory(resume)) return resume;
  auto all =
      list_checkpoints(std::filesystem::exists(resume + "/checkpoints") ? resume + "/checkpoints" : resume);
  if (all.empty()) return not_found("no checkpoint to resume from in " + resume);
  return all.back();
}

std::string metrics_lines_up_to(const std::string& path, int64_t step) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      if (nlohmann::json::parse(line).value("step", int64_t{0}) <= step) kept += line + "\n";
    } catch (const nlohmann::json::exception&) {
      break;  // a torn last line from a kill
    }
  }
  return kept;
}

void read_loss_curve(const std::string& path, std::vector<LossPoint>& train, std::vector<LossPoint>& dev) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    try {
      auto j = nlohmann::json::parse(line);
      train.push_back({j["step"].get<double>(), j["loss"].get<double>()});
      if (j.contains("dev_loss")) dev.push_back({j["step"].get<double>(), j["dev_loss"].get<double>()});
    } catch (const nlohmann::json::exception&) {
    }
  }
}

}  // namespace gpstream::train
