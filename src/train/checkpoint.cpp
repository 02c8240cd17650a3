// Checkpoint files.
#include "train/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/fnv1a.h"
#include "util/mapped_file.h"

namespace gpstream::train {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'C', 'K', 'P', 'T', '1'};

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
  const uint64_t sum = fnv1a(std::span<const std::byte>(out));
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
  if (!h.is_object()) return bad("header is not a JSON object");
  // An integer field in [lo, hi] (JSON integers only: no fractions, no strings).
  auto integer = [&](const char* key, uint64_t lo, uint64_t hi) -> Result<uint64_t> {
    const auto it = h.find(key);
    if (it == h.end()) return bad("field '" + std::string(key) + "' is missing");
    // A JSON reader keeps integers >= 0 as unsigned: a signed one is negative.
    const bool in_range = it->is_number_unsigned() && it->get<uint64_t>() >= lo && it->get<uint64_t>() <= hi;
    if (!in_range)
      return bad("field '" + std::string(key) + "' is " + it->dump() + "; it must be an integer from " +
                 std::to_string(lo) + " to " + std::to_string(hi));
    return it->get<uint64_t>();
  };
  const uint64_t max_counter = static_cast<uint64_t>(kCheckpointMaxCounter);
  {
    const auto it = h.find("version");
    if (it == h.end() || !it->is_number_integer()) return bad("field 'version' is missing or not an integer");
    if (*it != 1)
      return unsupported("checkpoint " + path + ": unknown version " + it->dump() + " (this build reads 1)");
  }
  // The parameter count, against the file's length: magic, header length, header, 3 x n floats, checksum.
  const uint64_t data_off = 16 + hl;
  GPS_ASSIGN(const uint64_t n, integer("n_params", 1, max_counter));
  if (n > (bytes.size() - data_off - 8) / 12 || data_off + 12 * n + 8 != bytes.size())
    return bad("size does not match: field 'n_params' is " + std::to_string(n) + ", so the file would have " +
               std::to_string(data_off + 12 * n + 8) + " bytes, not " + std::to_string(bytes.size()));
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + data_off + 12 * n, 8);
  if (sum != fnv1a(bytes.first(data_off + 12 * n))) return bad("checksum mismatch");

  CheckpointState s;
  GPS_ASSIGN(const uint64_t step, integer("step", 0, max_counter));
  GPS_ASSIGN(const uint64_t tokens_seen, integer("tokens_seen", 0, max_counter));
  GPS_ASSIGN(const uint64_t epoch, integer("epoch", 0, max_counter));
  GPS_ASSIGN(const uint64_t batch, integer("batch", 0, max_counter));
  GPS_ASSIGN(const uint64_t adam_t, integer("adam_t", 0, max_counter));
  GPS_ASSIGN(s.seed, integer("seed", 0, UINT64_MAX));
  s.step = static_cast<int64_t>(step);
  s.tokens_seen = static_cast<int64_t>(tokens_seen);
  s.data.epoch = static_cast<int64_t>(epoch);
  s.data.batch = static_cast<int64_t>(batch);
  s.adam_t = static_cast<int64_t>(adam_t);
  {
    const auto it = h.find("elapsed_s");
    if (it == h.end() || !it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>()))
      return bad("field 'elapsed_s' is " + (it == h.end() ? std::string("missing") : it->dump()) +
                 "; it must be a finite number of seconds >= 0");
    s.elapsed_s = it->get<double>();
  }
  {
    const auto it = h.find("fingerprint");
    if (it == h.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      return bad("field 'fingerprint' is " + (it == h.end() ? std::string("missing") : it->dump()) +
                 "; it must be a non-empty string");
    s.fingerprint = it->get<std::string>();
  }
  const size_t count = static_cast<size_t>(n);
  for (auto* a : {&s.values, &s.m, &s.v}) a->resize(count);
  std::memcpy(s.values.data(), bytes.data() + data_off, 4 * count);
  std::memcpy(s.m.data(), bytes.data() + data_off + 4 * count, 4 * count);
  std::memcpy(s.v.data(), bytes.data() + data_off + 8 * count, 4 * count);
  // Parameters and moments are finite (training stops on a non-finite loss), second moments >= 0 (AdamW
  // divides by their square root).
  const std::pair<const char*, const std::vector<float>*> arrays[] = {
      {"values", &s.values}, {"m", &s.m}, {"v", &s.v}};
  for (const auto& [name, a] : arrays)
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite((*a)[i]) || (a == &s.v && (*a)[i] < 0))
        return bad(std::string(name) + "[" + std::to_string(i) + "] is " + std::to_string((*a)[i]) +
                   (a == &s.v ? " (second moments are finite and >= 0)" : " (must be finite)"));
  return s;
}

Status check_resume_checkpoint(const CheckpointState& s, const std::string& path,
                               const CheckpointExpectation& e) {
  const std::string ckpt = "checkpoint " + path;
  if (s.fingerprint != e.fingerprint)
    return invalid_argument(ckpt + " belongs to a different model or setup (field 'fingerprint' is '" +
                            s.fingerprint + "', this run's is '" + e.fingerprint + "')");
  if (s.seed != e.seed)
    return invalid_argument(ckpt + " was made with another seed (field 'seed' is " + std::to_string(s.seed) +
                            ", this run's is " + std::to_string(e.seed) + ")");
  if (s.values.size() != e.n_params || s.m.size() != e.n_params || s.v.size() != e.n_params)
    return invalid_argument(ckpt + " holds " + std::to_string(s.values.size()) +
                            " parameters (field 'n_params') but this run's model has " +
                            std::to_string(e.n_params));
  if (s.adam_t != s.step)
    return invalid_argument(ckpt + " is inconsistent: field 'adam_t' is " + std::to_string(s.adam_t) +
                            " but field 'step' is " + std::to_string(s.step) +
                            " (training takes one optimizer step per step)");
  if (e.batches_per_epoch >= 0 && s.data.batch > e.batches_per_epoch)
    return invalid_argument(ckpt + ": field 'batch' is " + std::to_string(s.data.batch) + " but epoch " +
                            std::to_string(s.data.epoch) + " of this run's data has " +
                            std::to_string(e.batches_per_epoch) +
                            " batches (another corpus or batch size than the checkpoint's run?)");
  return {};
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
