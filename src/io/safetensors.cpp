// safetensors reader and writer. The header is untrusted: sizes, offsets, shapes and dtypes are all
// checked against the file before any tensor view is created.
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/json_reader.h"
#include "util/mapped_file.h"

namespace gpstream::io {
namespace {

using json = nlohmann::json;
constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit

Result<DType> parse_dtype(const std::string& s, const std::string& where) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  return unsupported(where + ": dtype " + s + " is not supported (expected F32, F16 or BF16)");
}

Result<uint64_t> json_u64(const json& v, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();  // before the signed test: 2^63 and up read as < 0
  if (!v.is_number_integer()) return format_error(where + ": expected an integer");
  if (v.get<int64_t>() < 0) return format_error(where + ": negative value");
  return v.get<uint64_t>();
}

}  // namespace

Status read_safetensors(const std::string& path, TensorMap& into, Residency residency) {
  // Parsed into a local map and merged only on success: on error `into` is left untouched (views into
  // this file must never outlive the mapping, which dies with `file` when we return early).
  TensorMap local;
  GPS_ASSIGN(auto file, MappedFile::open(path, residency));
  auto bytes = file->bytes();
  if (bytes.size() < 8)
    return format_error(path + ": file too short for a safetensors header (" + std::to_string(bytes.size()) +
                        " bytes)");
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);  // little-endian host (x86-64)
  if (header_len > kMaxHeaderBytes)
    return format_error(path + ": header length " + std::to_string(header_len) +
                        " exceeds the 100 MiB limit");
  if (header_len > bytes.size() - 8)
    return format_error(path + ": header length " + std::to_string(header_len) +
                        " runs past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
  const std::byte* data_begin = bytes.data() + 8 + header_len;
  const uint64_t data_size = bytes.size() - 8 - header_len;

  json header;
  try {
    header = json::parse(reinterpret_cast<const char*>(bytes.data() + 8),
                         reinterpret_cast<const char*>(bytes.data() + 8 + header_len));
  } catch (const json::exception& e) {
    return format_error(path + ": header is not valid JSON: " + e.what());
  }
  if (!header.is_object()) return format_error(path + ": header is not a JSON object");

  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) return format_error(path + ": __metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return format_error(path + ": __metadata__." + m.key() + " is not a string");
        local.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = path + ": tensor " + name;
    if (!entry.is_object()) return format_error(where + ": entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string())
      return format_error(where + ": missing dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array())
      return format_error(where + ": missing shape");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      return format_error(where + ": data_offsets must be [begin, end]");
    GPS_ASSIGN(DType dtype, parse_dtype(entry["dtype"].get<std::string>(), where));
    TensorData t;
    t.dtype = dtype;
    uint64_t numel = 1;
    for (const json& d : entry["shape"]) {
      GPS_ASSIGN(uint64_t dim, json_u64(d, where + ": shape"));
      if (dim > (uint64_t{1} << 40))
        return format_error(where + ": dimension " + std::to_string(dim) + " too large");
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / dim)
        return format_error(where + ": shape overflows");
      numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    GPS_ASSIGN(uint64_t begin, json_u64(entry["data_offsets"][0], where + ": data_offsets"));
    GPS_ASSIGN(uint64_t end, json_u64(entry["data_offsets"][1], where + ": data_offsets"));
    if (begin > end)
      return format_error(where + ": data_offsets begin " + std::to_string(begin) + " > end " +
                          std::to_string(end));
    if (end > data_size)
      return format_error(where + ": data_offsets end " + std::to_string(end) +
                          " is past the end of the data (" + std::to_string(data_size) + " bytes)");
    if (numel > (uint64_t{1} << 50) || end - begin != numel * dtype_size(dtype))
      return format_error(where + ": " + std::to_string(end - begin) + " bytes for shape " +
                          t.shape_string() + " of " + dtype_name(dtype) + " (expected " +
                          std::to_string(numel * dtype_size(dtype)) + ")");
    if (into.tensors.count(name)) return format_error(where + ": defined twice");
    const std::byte* p = data_begin + begin;
    if (reinterpret_cast<uintptr_t>(p) % dtype_size(dtype) != 0) {
      // Misaligned for its dtype: copy so kernels can read it as an array.
      local.add_raw(name, dtype, t.shape, std::vector<std::byte>(p, p + (end - begin)));
    } else {
      t.bytes = std::span<const std::byte>(p, end - begin);
      local.tensors[name] = t;
    }
    spans.push_back({begin, end, name});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].begin < spans[i - 1].end)
      return format_error(path + ": tensors " + spans[i - 1].name + " and " + spans[i].name + " overlap");
  }
  local.owners.push_back(file);
  for (auto& [name, t] : local.tensors) into.tensors[name] = std::move(t);
  for (auto& o : local.owners) into.owners.push_back(std::move(o));
  for (auto& [k, v] : local.metadata) into.metadata[k] = std::move(v);
  return {};
}

Result<TensorMap> read_safetensors_dir(const std::string& dir, Residency residency) {
  namespace fs = std::filesystem;
  TensorMap map;
  fs::path base(dir);
  std::error_code ec;
  if (fs::exists(base / "model.safetensors", ec)) {
    GPS_TRY(read_safetensors((base / "model.safetensors").string(), map, residency));
    return map;
  }
  fs::path index = base / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    GPS_ASSIGN(std::string text, read_regular_text_file(index.string()));
    // A Hugging Face file ({"metadata": ..., "weight_map": {tensor: shard}}) nesting 2 levels; other keys
    // are skipped.
    constexpr int kMaxIndexJsonDepth = 8;
    GPS_ASSIGN(json j, parse_json_object(text, index.string(), kMaxIndexJsonDepth));
    GPS_ASSIGN(JsonReader top, JsonReader::open(j, index.string(), "", UnknownKeys::Ignore));
    GPS_ASSIGN(JsonReader weight_map, top.required_object("weight_map"));
    std::vector<std::pair<std::string, std::string>> tensor_shards;  // (tensor, shard)
    std::vector<std::string> shards;
    for (auto it = weight_map.json().begin(); it != weight_map.json().end(); ++it) {
      std::string shard;
      GPS_TRY(weight_map.required(it.key(), shard));
      if (shard.find('/') != std::string::npos || shard.find("..") != std::string::npos)
        return format_error(index.string() + ": shard name '" + shard + "' must be a plain file name");
      if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
      tensor_shards.emplace_back(it.key(), shard);
    }
    for (const auto& shard : shards) GPS_TRY(read_safetensors((base / shard).string(), map, residency));
    for (const auto& [tensor, shard] : tensor_shards) {
      if (!map.find(tensor))
        return format_error(index.string() + ": tensor " + tensor + " is not in shard " + shard);
    }
    return map;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(base, ec))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  if (ec) return io_error(dir + ": cannot list directory: " + ec.message());
  if (files.empty()) return not_found(dir + ": no model.safetensors, index or *.safetensors file");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) GPS_TRY(read_safetensors(f.string(), map, residency));
  return map;
}

Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    uint64_t n = t.data.bytes.size();
    GPS_ASSERT(n == static_cast<uint64_t>(t.data.numel()) * dtype_size(t.data.dtype),
               "write_safetensors: size");
    header[t.name] = {
        {"dtype", dtype_name(t.data.dtype)}, {"shape", t.data.shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8 != 0) h.push_back(' ');  // pad so the data starts 8-byte aligned
  std::vector<std::byte> out(8 + h.size() + offset);
  uint64_t hl = h.size();
  std::memcpy(out.data(), &hl, 8);
  std::memcpy(out.data() + 8, h.data(), h.size());
  size_t pos = 8 + h.size();
  for (const auto& t : tensors) {
    if (!t.data.bytes.empty()) std::memcpy(out.data() + pos, t.data.bytes.data(), t.data.bytes.size());
    pos += t.data.bytes.size();
  }
  return write_file_atomic(path, out);
}

}  // namespace gpstream::io
