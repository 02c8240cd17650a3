// Checkpoint files.
#include "train/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/mapped_file.h"

namespace gpstream::train {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'C', 'K', 'P', 'T', '1'};

uint64_t fnv1a(const std::byte* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<uint64_t>(p[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

void put(std::vector<std::byte>& out, const void* p, size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

}  // namespace

Status write_checkpoint(const std::string& path, const CheckpointState& s) {
  if (s.m.size() != s.values.size() || s.v.size() != s.values.size())
    return invalid_argument("checkpoint: optimizer state does not match the parameters");
  nlohmann::ordered_json h;
  h["version"] = 1;
  h["step"] = s.step;
  h["tokens_seen"] = s.tokens_seen;
  h["epoch"] = s.data.epoch;
  h["batch"] = s.data.batch;
  h["adam_t"] = s.adam_t;
  h["seed"] = s.seed;
  h["elapsed_s"] = s.elapsed_s;
  h["fingerprint"] = s.fingerprint;
  h["n_params"] = s.values.size();
  const std::string header = h.dump();
  std::vector<std::byte> out;
  out.reserve(24 + header.size() + 12 * s.values.size() + 8);
  put(out, kMagic, 8);
  const uint64_t hl = header.size();
  put(out, &hl, 8);
  put(out, header.data(), header.size());
  for (const auto* a : {&s.values, &s.m, &s.v}) put(out, a->data(), a->size() * sizeof(float));
  const uint64_t sum = fnv1a(out.data(), out.size());
  put(out, &sum, 8);
  return write_file_atomic(path, out);
}

Result<CheckpointState> read_checkpoint(const std::string& path) {
  GPS_ASSIGN(auto file, MappedFile::open(path));
  const auto bytes = file->bytes();
  auto bad = [&](const std::string& why) {
    return format_error("checkpoint " + path + " is corrupted or incomplete (" + why +
                        "); delete it to resume from an earlier one");
  };
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kMagic, 8) != 0) return bad("bad magic or too short");
  uint64_t hl = 0;
  std::memcpy(&hl, bytes.data() + 8, 8);
  if (hl > bytes.size() - 24) return bad("header length past the end");
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(bytes.data() + 16), hl));
  } catch (const nlohmann::json::exception&) {
    return bad("header is not JSON");
  }
  CheckpointState s;
  size_t n = 0;
  try {
    if (h.at("version").get<int>() != 1) return unsupported("checkpoint " + path + ": unknown version");
    s.step = h.at("step").get<int64_t>();
    s.tokens_seen = h.at("tokens_seen").get<int64_t>();
    s.data.epoch = h.at("epoch").get<int64_t>();
    s.data.batch = h.at("batch").get<int64_t>();
    s.adam_t = h.at("adam_t").get<int64_t>();
    s.seed = h.at("seed").get<uint64_t>();
    s.elapsed_s = h.at("elapsed_s").get<double>();
    s.fingerprint = h.at("fingerprint").get<std::string>();
    n = h.at("n_params").get<size_t>();
  } catch (const nlohmann::json::exception&) {
    return bad("header fields missing or of the wrong type");
  }
  const size_t data_off = 16 + hl;
  if (n > (bytes.size() - data_off) / 12 || data_off + 12 * n + 8 != bytes.size())
    return bad("size does not match");
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + data_off + 12 * n, 8);
  if (sum != fnv1a(bytes.data(), data_off + 12 * n)) return bad("checksum mismatch");
  for (auto* a : {&s.values, &s.m, &s.v}) a->resize(n);
  std::memcpy(s.values.data(), bytes.data() + data_off, 4 * n);
  std::memcpy(s.m.data(), bytes.data() + data_off + 4 * n, 4 * n);
  std::memcpy(s.v.data(), bytes.data() + data_off + 8 * n, 4 * n);
  return s;
}

namespace {

// The step of a file named checkpoint-<digits>.bin with 1 to 18 digits (no overflow), else -1.
int64_t checkpoint_step(const std::string& name) {
  if (name.rfind("checkpoint-", 0) != 0 || name.size() < 16 || name.substr(name.size() - 4) != ".bin")
    return -1;
  const std::string num = name.substr(11, name.size() - 15);
  if (num.empty() || num.size() > 18 || num.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(num);
}

}  // namespace

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const int64_t step = checkpoint_step(e.path().filename().string());
    if (step >= 0) found.emplace_back(step, e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

Status prune_checkpoints(const std::string& dir, int keep, int64_t keep_every) {
  auto all = list_checkpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(std::max(keep, 1)) < all.size(); ++i) {
    if (keep_every > 0 &&
        checkpoint_step(std::filesystem::path(all[i]).filename().string()) % keep_every == 0)
      continue;
    std::error_code ec;
    std::filesystem::remove(all[i], ec);
    if (ec) return io_error("cannot delete old checkpoint " + all[i] + ": " + ec.message());
  }
  return {};
}

}  // namespace gpstream::train
