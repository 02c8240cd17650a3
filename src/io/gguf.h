// GGUF (llama.cpp's model file), versions 2 and 3: read (memory-mapped; every count, length, offset,
// dimension and type checked against the file, overflow-safe) and write (streamed to a temporary file,
// then renamed). Layout, all little-endian:
//   "GGUF" u32 version, u64 tensor_count, u64 kv_count
//   kv_count × (string key, u32 value type, value)       string = u64 length + bytes (no terminator)
//   tensor_count × (string name, u32 n_dims, u64 dims[n_dims] innermost first, u32 ggml type, u64 offset)
//   padding to `general.alignment` (u32, default 32), then the tensor data; offsets are relative to it and
//   multiples of the alignment.
// Tensors come back as an io::TensorMap with shapes outermost first (a GGUF [ne0 = in, ne1 = out] matrix is
// [out, in], as in safetensors). Supported tensor types: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/tensor.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace gpstream::io {

enum class GgufType : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };
const char* gguf_type_name(GgufType t);

// One metadata value. Scalars: integers (and Bool) in `i` (U64 above 2^63 - 1 is refused at read), floats in
// `f`, strings in `str`. Arrays (of scalars or strings; nested arrays are refused): elem_type and one of
// ints / floats / strs.
struct GgufValue {
  GgufType type = GgufType::U32;
  GgufType elem_type = GgufType::U8;
  int64_t i = 0;
  double f = 0.0;
  std::string str;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strs;

  static GgufValue u32(uint32_t v);
  static GgufValue i32(int32_t v);
  static GgufValue u64(uint64_t v);
  static GgufValue f32(float v);
  static GgufValue boolean(bool v);
  static GgufValue string(std::string v);
  static GgufValue string_array(std::vector<std::string> v);
  static GgufValue int_array(GgufType elem, std::vector<int64_t> v);
  static GgufValue float_array(std::vector<double> v);  // F32 elements
  bool is_int() const;
  bool is_float() const { return type == GgufType::F32 || type == GgufType::F64; }
  bool is_array() const { return type == GgufType::Array; }
  size_t array_size() const;
};

// Ordered key → value list (the file's order is kept; keys are unique).
class GgufMetadata {
 public:
  const GgufValue* find(const std::string& key) const;
  // Replaces an existing key's value in place or appends.
  void set(const std::string& key, GgufValue v);
  const std::vector<std::pair<std::string, GgufValue>>& items() const { return items_; }

  // Typed getters: a missing key gives `fallback` (or a NotFound error without one), a wrong type a Format
  // error naming the key.
  Result<int64_t> get_int(const std::string& key, std::optional<int64_t> fallback = std::nullopt) const;
  Result<double> get_float(const std::string& key, std::optional<double> fallback = std::nullopt) const;
  Result<std::string> get_string(const std::string& key,
                                 std::optional<std::string> fallback = std::nullopt) const;
  Result<bool> get_bool(const std::string& key, std::optional<bool> fallback = std::nullopt) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> items_;
  std::unordered_map<std::string, size_t> index_;  // key → position in items_ (hostile files have millions)
};

struct GgufFile {
  uint32_t version = 3;
  uint64_t alignment = 32;
  GgufMetadata metadata;
  std::vector<std::string> tensor_order;  // names in file order
  TensorMap tensors;                      // views into the mapped file (copies where misaligned)
};

// Residency::Resident reads the file into private huge-page memory instead of mapping it
// (util/mapped_file.h).
Result<GgufFile> read_gguf(const std::string& path, Residency residency = Residency::Mapped);

struct GgufTensorToWrite {
  std::string name;
  TensorData data;  // shape outermost first; quantized types need whole blocks along the last dimension
};

// Writes a version-3 GGUF. `general.alignment` in the metadata (U32, power of two) sets the alignment,
// else 32. Errors: duplicate names, sizes that do not match shape and dtype, I/O.
Status write_gguf(const std::string& path, const GgufMetadata& metadata,
                  const std::vector<GgufTensorToWrite>& tensors);

// ggml type codes (GGUF tensor infos) of the dtypes gpstream reads.
uint32_t ggml_type_code(DType t);

}  // namespace gpstream::io
