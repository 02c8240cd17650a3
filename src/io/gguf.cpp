// GGUF reader and writer. The reader trusts nothing: a cursor checks every read against the end of the
// file, counts are checked against the bytes left before anything is allocated, and tensor infos are
// checked for type, dimensions, size, alignment, bounds and overlap before a view is made.
#include "io/gguf.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "util/mapped_file.h"

namespace gpstream::io {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
constexpr uint64_t kMaxDim = uint64_t{1} << 40;
constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;

size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool:
      return 1;
    case GgufType::U16:
    case GgufType::I16:
      return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32:
      return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64:
      return 8;
    case GgufType::String:
    case GgufType::Array:
      return 0;
  }
  return 0;
}

struct Cursor {
  const std::byte* data;
  uint64_t size;
  uint64_t pos = 0;
  const std::string& path;

  uint64_t left() const { return size - pos; }
  Error short_read(const std::string& what, uint64_t need) const {
    return format_error(path + ": " + what + " at byte " + std::to_string(pos) + " needs " +
                        std::to_string(need) + " bytes, the file has " + std::to_string(left()) + " left");
  }
  template <typename T>
  Result<T> scalar(const std::string& what) {
    if (left() < sizeof(T)) return short_read(what, sizeof(T));
    T v;
    std::memcpy(&v, data + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  Result<std::string> string(const std::string& what) {
    GPS_ASSIGN(uint64_t n, scalar<uint64_t>(what + " length"));
    if (n > kMaxStringBytes)
      return format_error(path + ": " + what + " length " + std::to_string(n) + " exceeds 1 GiB");
    if (n > left()) return short_read(what, n);
    std::string s(reinterpret_cast<const char*>(data + pos), n);
    pos += n;
    return s;
  }
};

Result<GgufType> value_type(uint32_t code, const std::string& where) {
  if (code > static_cast<uint32_t>(GgufType::F64))
    return format_error(where + ": unknown value type " + std::to_string(code));
  return static_cast<GgufType>(code);
}

// A scalar of type t as int64 (integers, Bool) or double (floats).
Status read_scalar(Cursor& c, GgufType t, int64_t& i, double& f, const std::string& where) {
  switch (t) {
    case GgufType::U8: {
      GPS_ASSIGN(uint8_t v, c.scalar<uint8_t>(where));
      i = v;
      break;
    }
    case GgufType::I8: {
      GPS_ASSIGN(int8_t v, c.scalar<int8_t>(where));
      i = v;
      break;
    }
    case GgufType::U16: {
      GPS_ASSIGN(uint16_t v, c.scalar<uint16_t>(where));
      i = v;
      break;
    }
    case GgufType::I16: {
      GPS_ASSIGN(int16_t v, c.scalar<int16_t>(where));
      i = v;
      break;
    }
    case GgufType::U32: {
      GPS_ASSIGN(uint32_t v, c.scalar<uint32_t>(where));
      i = v;
      break;
    }
    case GgufType::I32: {
      GPS_ASSIGN(int32_t v, c.scalar<int32_t>(where));
      i = v;
      break;
    }
    case GgufType::I64: {
      GPS_ASSIGN(int64_t v, c.scalar<int64_t>(where));
      i = v;
      break;
    }
    case GgufType::U64: {
      GPS_ASSIGN(uint64_t v, c.scalar<uint64_t>(where));
      if (v > static_cast<uint64_t>(INT64_MAX))
        return format_error(c.path + ": " + where + ": u64 value too large");
      i = static_cast<int64_t>(v);
      break;
    }
    case GgufType::Bool: {
      GPS_ASSIGN(uint8_t v, c.scalar<uint8_t>(where));
      if (v > 1)
        return format_error(c.path + ": " + where + ": bool value " + std::to_string(v) + " is not 0 or 1");
      i = v;
      break;
    }
    case GgufType::F32: {
      GPS_ASSIGN(float v, c.scalar<float>(where));
      f = v;
      break;
    }
    case GgufType::F64: {
      GPS_ASSIGN(double v, c.scalar<double>(where));
      f = v;
      break;
    }
    case GgufType::String:
    case GgufType::Array:
      return format_error(c.path + ": " + where + ": not a scalar type");
  }
  return {};
}

Result<GgufValue> read_value(Cursor& c, GgufType t, const std::string& where) {
  GgufValue v;
  v.type = t;
  if (t == GgufType::String) {
    GPS_ASSIGN(v.str, c.string(where));
    return v;
  }
  if (t != GgufType::Array) {
    GPS_TRY(read_scalar(c, t, v.i, v.f, where));
    return v;
  }
  GPS_ASSIGN(uint32_t code, c.scalar<uint32_t>(where + " element type"));
  GPS_ASSIGN(v.elem_type, value_type(code, c.path + ": " + where + " element type"));
  if (v.elem_type == GgufType::Array)
    return unsupported(c.path + ": " + where + ": nested arrays are not supported");
  GPS_ASSIGN(uint64_t n, c.scalar<uint64_t>(where + " count"));
  // Every element takes at least one byte (a string at least its 8-byte length): bound n before allocating.
  const uint64_t min_size = v.elem_type == GgufType::String ? 8 : scalar_size(v.elem_type);
  if (n > c.left() / min_size)
    return format_error(c.path + ": " + where + ": array of " + std::to_string(n) +
                        " elements runs past the end of the file");
  if (v.elem_type == GgufType::String) {
    v.strs.reserve(n);
    for (uint64_t k = 0; k < n; ++k) {
      GPS_ASSIGN(std::string s, c.string(where + "[" + std::to_string(k) + "]"));
      v.strs.push_back(std::move(s));
    }
  } else if (v.elem_type == GgufType::F32 || v.elem_type == GgufType::F64) {
    v.floats.resize(n);
    int64_t unused = 0;
    for (uint64_t k = 0; k < n; ++k) GPS_TRY(read_scalar(c, v.elem_type, unused, v.floats[k], where));
  } else {
    v.ints.resize(n);
    double unused = 0;
    for (uint64_t k = 0; k < n; ++k) GPS_TRY(read_scalar(c, v.elem_type, v.ints[k], unused, where));
  }
  return v;
}

Result<DType> tensor_dtype(uint32_t code, const std::string& where) {
  switch (code) {
    case 0:
      return DType::F32;
    case 1:
      return DType::F16;
    case 2:
      return DType::Q4_0;
    case 8:
      return DType::Q8_0;
    case 12:
      return DType::Q4_K;
    case 14:
      return DType::Q6_K;
    case 30:
      return DType::BF16;
    default:
      break;
  }
  static const std::map<uint32_t, const char*> known = {
      {3, "Q4_1"},     {6, "Q5_0"},   {7, "Q5_1"},    {9, "Q8_1"},     {10, "Q2_K"},
      {11, "Q3_K"},    {13, "Q5_K"},  {15, "Q8_K"},   {16, "IQ2_XXS"}, {17, "IQ2_XS"},
      {18, "IQ3_XXS"}, {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},   {22, "IQ2_S"},
      {23, "IQ4_XS"},  {24, "I8"},    {25, "I16"},    {26, "I32"},     {27, "I64"},
      {28, "F64"},     {29, "IQ1_M"}, {34, "TQ1_0"},  {35, "TQ2_0"},   {39, "MXFP4"}};
  auto it = known.find(code);
  const std::string name = it == known.end() ? "unknown type " + std::to_string(code)
                                             : std::string(it->second) + " (" + std::to_string(code) + ")";
  return unsupported(where + ": tensor type " + name +
                     " is not supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)");
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  static const char* names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                "bool", "string", "array", "u64", "i64", "f64"};
  const auto k = static_cast<uint32_t>(t);
  return k < 13 ? names[k] : "?";
}

uint32_t ggml_type_code(DType t) {
  switch (t) {
    case DType::F32:
      return 0;
    case DType::F16:
      return 1;
    case DType::Q4_0:
      return 2;
    case DType::Q8_0:
      return 8;
    case DType::Q4_K:
      return 12;
    case DType::Q6_K:
      return 14;
    case DType::BF16:
      return 30;
  }
  return 0;
}

GgufValue GgufValue::u32(uint32_t v) {
  GgufValue x;
  x.type = GgufType::U32;
  x.i = v;
  return x;
}
GgufValue GgufValue::i32(int32_t v) {
  GgufValue x;
  x.type = GgufType::I32;
  x.i = v;
  return x;
}
GgufValue GgufValue::u64(uint64_t v) {
  GgufValue x;
  x.type = GgufType::U64;
  x.i = static_cast<int64_t>(v);
  return x;
}
GgufValue GgufValue::f32(float v) {
  GgufValue x;
  x.type = GgufType::F32;
  x.f = v;
  return x;
}
GgufValue GgufValue::boolean(bool v) {
  GgufValue x;
  x.type = GgufType::Bool;
  x.i = v;
  return x;
}
GgufValue GgufValue::string(std::string v) {
  GgufValue x;
  x.type = GgufType::String;
  x.str = std::move(v);
  return x;
}
GgufValue GgufValue::string_array(std::vector<std::string> v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = GgufType::String;
  x.strs = std::move(v);
  return x;
}
GgufValue GgufValue::int_array(GgufType elem, std::vector<int64_t> v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = elem;
  x.ints = std::move(v);
  return x;
}
GgufValue GgufValue::float_array(std::vector<double> v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = GgufType::F32;
  x.floats = std::move(v);
  return x;
}

bool GgufValue::is_int() const {
  switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64:
      return true;
    default:
      return false;
  }
}

size_t GgufValue::array_size() const {
  if (!is_array()) return 0;
  if (elem_type == GgufType::String) return strs.size();
  if (elem_type == GgufType::F32 || elem_type == GgufType::F64) return floats.size();
  return ints.size();
}

const GgufValue* GgufMetadata::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

void GgufMetadata::set(const std::string& key, GgufValue v) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    items_[it->second].second = std::move(v);
    return;
  }
  index_.emplace(key, items_.size());
  items_.emplace_back(key, std::move(v));
}

Result<int64_t> GgufMetadata::get_int(const std::string& key, std::optional<int64_t> fallback) const {
  const GgufValue* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    return not_found("missing metadata key " + key);
  }
  if (!v->is_int())
    return format_error("metadata key " + key + " is " + gguf_type_name(v->type) + ", expected an integer");
  return v->i;
}

Result<double> GgufMetadata::get_float(const std::string& key, std::optional<double> fallback) const {
  const GgufValue* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    return not_found("missing metadata key " + key);
  }
  if (!v->is_float())
    return format_error("metadata key " + key + " is " + gguf_type_name(v->type) + ", expected a float");
  return v->f;
}

Result<std::string> GgufMetadata::get_string(const std::string& key,
                                             std::optional<std::string> fallback) const {
  const GgufValue* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    return not_found("missing metadata key " + key);
  }
  if (v->type != GgufType::String)
    return format_error("metadata key " + key + " is " + gguf_type_name(v->type) + ", expected a string");
  return v->str;
}

Result<bool> GgufMetadata::get_bool(const std::string& key, std::optional<bool> fallback) const {
  const GgufValue* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    return not_found("missing metadata key " + key);
  }
  if (v->type != GgufType::Bool)
    return format_error("metadata key " + key + " is " + gguf_type_name(v->type) + ", expected a bool");
  return v->i != 0;
}

Result<GgufFile> read_gguf(const std::string& path, Residency residency) {
  GPS_ASSIGN(auto file, MappedFile::open(path, residency));
  const auto bytes = file->bytes();
  Cursor c{bytes.data(), bytes.size(), 0, path};
  GgufFile g;
  GPS_ASSIGN(uint32_t magic, c.scalar<uint32_t>("magic"));
  if (magic != kMagic) return format_error(path + ": not a GGUF file (magic is not \"GGUF\")");
  GPS_ASSIGN(g.version, c.scalar<uint32_t>("version"));
  if (g.version != 2 && g.version != 3)
    return unsupported(path + ": GGUF version " + std::to_string(g.version) +
                       " is not supported (supported: 2, 3)");
  GPS_ASSIGN(uint64_t n_tensors, c.scalar<uint64_t>("tensor_count"));
  GPS_ASSIGN(uint64_t n_kv, c.scalar<uint64_t>("kv_count"));
  // A key-value pair takes at least 8 + 4 + 1 bytes, a tensor info at least 8 + 4 + 8 + 4 + 8.
  if (n_kv > c.left() / 13)
    return format_error(path + ": kv_count " + std::to_string(n_kv) + " is more than the file can hold");
  if (n_tensors > c.left() / 32)
    return format_error(path + ": tensor_count " + std::to_string(n_tensors) +
                        " is more than the file can hold");

  for (uint64_t k = 0; k < n_kv; ++k) {
    const std::string where = "metadata entry " + std::to_string(k);
    GPS_ASSIGN(std::string key, c.string(where + " key"));
    if (g.metadata.find(key)) return format_error(path + ": metadata key " + key + " appears twice");
    GPS_ASSIGN(uint32_t code, c.scalar<uint32_t>("type of metadata key " + key));
    GPS_ASSIGN(GgufType t, value_type(code, path + ": metadata key " + key));
    GPS_ASSIGN(GgufValue v, read_value(c, t, "metadata key " + key));
    g.metadata.set(key, std::move(v));
  }
  if (const GgufValue* a = g.metadata.find("general.alignment")) {
    if (a->type != GgufType::U32) return format_error(path + ": general.alignment must be u32");
    if (a->i == 0 || (a->i & (a->i - 1)) != 0 || a->i > (1 << 20))
      return format_error(path + ": general.alignment " + std::to_string(a->i) +
                          " is not a power of two up to 2^20");
    g.alignment = static_cast<uint64_t>(a->i);
  } else {
    g.alignment = kDefaultAlignment;
  }

  struct Info {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t offset, nbytes;
  };
  std::vector<Info> infos;
  std::set<std::string> names;
  for (uint64_t k = 0; k < n_tensors; ++k) {
    Info info;
    GPS_ASSIGN(info.name, c.string("tensor " + std::to_string(k) + " name"));
    const std::string where = path + ": tensor " + info.name;
    if (!names.insert(info.name).second) return format_error(where + ": defined twice");
    GPS_ASSIGN(uint32_t n_dims, c.scalar<uint32_t>("tensor " + info.name + " n_dims"));
    if (n_dims == 0 || n_dims > kMaxDims)
      return format_error(where + ": n_dims " + std::to_string(n_dims) + " is not in 1..4");
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < n_dims; ++d) {
      GPS_ASSIGN(uint64_t dim, c.scalar<uint64_t>("tensor " + info.name + " dimension"));
      if (dim > kMaxDim) return format_error(where + ": dimension " + std::to_string(dim) + " is too large");
      dims.push_back(static_cast<int64_t>(dim));
    }
    info.shape.assign(dims.rbegin(), dims.rend());  // outermost first
    GPS_ASSIGN(uint32_t code, c.scalar<uint32_t>("tensor " + info.name + " type"));
    GPS_ASSIGN(info.dtype, tensor_dtype(code, where));
    GPS_ASSIGN(info.offset, c.scalar<uint64_t>("tensor " + info.name + " offset"));
    const auto nbytes = tensor_nbytes(info.dtype, info.shape);
    if (!nbytes) {
      TensorData shown;
      shown.shape = info.shape;
      return format_error(where + ": shape " + shown.shape_string() + " of " + dtype_name(info.dtype) +
                          (dtype_is_quantized(info.dtype)
                               ? " needs a multiple of " + std::to_string(dtype_block_elems(info.dtype)) +
                                     " elements along the innermost dimension and a sane size"
                               : " is too large"));
    }
    info.nbytes = *nbytes;
    if (info.offset % g.alignment != 0)
      return format_error(where + ": offset " + std::to_string(info.offset) +
                          " is not a multiple of the alignment " + std::to_string(g.alignment));
    infos.push_back(std::move(info));
  }
  const uint64_t data_start = (c.pos + g.alignment - 1) / g.alignment * g.alignment;
  const uint64_t data_size = data_start <= c.size ? c.size - data_start : 0;
  if (!infos.empty() && data_start > c.size)
    return format_error(path + ": the tensor data would start at byte " + std::to_string(data_start) +
                        ", past the end of the file");
  std::vector<const Info*> by_offset;
  for (const Info& info : infos) {
    if (info.offset > data_size || info.nbytes > data_size - info.offset)
      return format_error(path + ": tensor " + info.name + ": bytes [" + std::to_string(info.offset) + ", +" +
                          std::to_string(info.nbytes) + ") run past the end of the data (" +
                          std::to_string(data_size) + " bytes)");
    by_offset.push_back(&info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Info* a, const Info* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    if (by_offset[k]->offset < by_offset[k - 1]->offset + by_offset[k - 1]->nbytes)
      return format_error(path + ": tensors " + by_offset[k - 1]->name + " and " + by_offset[k]->name +
                          " overlap");
  }
  for (const Info& info : infos) {
    const std::byte* p = bytes.data() + data_start + info.offset;
    // Kernels read F32 as float arrays and 16-bit / block scales as uint16: copy if misaligned for them.
    const size_t need = info.dtype == DType::F32 ? 4 : 2;
    if (reinterpret_cast<uintptr_t>(p) % need != 0) {
      g.tensors.add_raw(info.name, info.dtype, info.shape, std::vector<std::byte>(p, p + info.nbytes));
    } else {
      TensorData t;
      t.dtype = info.dtype;
      t.shape = info.shape;
      t.bytes = std::span<const std::byte>(p, info.nbytes);
      g.tensors.tensors[info.name] = std::move(t);
    }
    g.tensor_order.push_back(info.name);
  }
  g.tensors.owners.push_back(file);
  return g;
}

namespace {

// Buffered little-endian output to a FILE*.
struct Out {
  std::FILE* f;
  uint64_t pos = 0;
  bool ok = true;
  void raw(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f) != n) ok = false;
    pos += n;
  }
  template <typename T>
  void scalar(T v) {
    raw(&v, sizeof(T));
  }
  void string(const std::string& s) {
    scalar<uint64_t>(s.size());
    raw(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const char zeros[64] = {};
    while (pos % alignment != 0) raw(zeros, std::min<uint64_t>(sizeof(zeros), alignment - pos % alignment));
  }
};

void write_scalar(Out& o, GgufType t, int64_t i, double f) {
  switch (t) {
    case GgufType::U8:
      o.scalar<uint8_t>(static_cast<uint8_t>(i));
      break;
    case GgufType::I8:
      o.scalar<int8_t>(static_cast<int8_t>(i));
      break;
    case GgufType::U16:
      o.scalar<uint16_t>(static_cast<uint16_t>(i));
      break;
    case GgufType::I16:
      o.scalar<int16_t>(static_cast<int16_t>(i));
      break;
    case GgufType::U32:
      o.scalar<uint32_t>(static_cast<uint32_t>(i));
      break;
    case GgufType::I32:
      o.scalar<int32_t>(static_cast<int32_t>(i));
      break;
    case GgufType::U64:
      o.scalar<uint64_t>(static_cast<uint64_t>(i));
      break;
    case GgufType::I64:
      o.scalar<int64_t>(i);
      break;
    case GgufType::Bool:
      o.scalar<uint8_t>(i ? 1 : 0);
      break;
    case GgufType::F32:
      o.scalar<float>(static_cast<float>(f));
      break;
    case GgufType::F64:
      o.scalar<double>(f);
      break;
    case GgufType::String:
    case GgufType::Array:
      break;
  }
}

}  // namespace

Status write_gguf(const std::string& path, const GgufMetadata& metadata,
                  const std::vector<GgufTensorToWrite>& tensors) {
  uint64_t alignment = kDefaultAlignment;
  if (const GgufValue* a = metadata.find("general.alignment")) {
    if (a->type != GgufType::U32 || a->i <= 0 || (a->i & (a->i - 1)) != 0)
      return invalid_argument("write_gguf: general.alignment must be a u32 power of two");
    alignment = static_cast<uint64_t>(a->i);
  }
  std::set<std::string> names;
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second)
      return invalid_argument("write_gguf: tensor " + t.name + " given twice");
    const auto n = tensor_nbytes(t.data.dtype, t.data.shape);
    if (!n || *n != t.data.bytes.size())
      return invalid_argument("write_gguf: tensor " + t.name + ": " + std::to_string(t.data.bytes.size()) +
                              " bytes do not match shape " + t.data.shape_string() + " of " +
                              dtype_name(t.data.dtype));
    if (t.data.shape.empty() || t.data.shape.size() > kMaxDims)
      return invalid_argument("write_gguf: tensor " + t.name + " must have 1 to 4 dimensions");
    offsets.push_back(offset);
    offset = (offset + *n + alignment - 1) / alignment * alignment;
  }
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return io_error(tmp + ": cannot create: " + std::strerror(errno));
  Out o{f};
  o.scalar<uint32_t>(kMagic);
  o.scalar<uint32_t>(3);
  o.scalar<uint64_t>(tensors.size());
  o.scalar<uint64_t>(metadata.items().size());
  for (const auto& [key, v] : metadata.items()) {
    o.string(key);
    o.scalar<uint32_t>(static_cast<uint32_t>(v.type));
    if (v.type == GgufType::String) {
      o.string(v.str);
    } else if (v.type == GgufType::Array) {
      o.scalar<uint32_t>(static_cast<uint32_t>(v.elem_type));
      o.scalar<uint64_t>(v.array_size());
      if (v.elem_type == GgufType::String) {
        for (const auto& s : v.strs) o.string(s);
      } else if (v.elem_type == GgufType::F32 || v.elem_type == GgufType::F64) {
        for (double x : v.floats) write_scalar(o, v.elem_type, 0, x);
      } else {
        for (int64_t x : v.ints) write_scalar(o, v.elem_type, x, 0);
      }
    } else {
      write_scalar(o, v.type, v.i, v.f);
    }
  }
  for (size_t k = 0; k < tensors.size(); ++k) {
    const auto& t = tensors[k];
    o.string(t.name);
    o.scalar<uint32_t>(static_cast<uint32_t>(t.data.shape.size()));
    for (auto it = t.data.shape.rbegin(); it != t.data.shape.rend(); ++it)
      o.scalar<uint64_t>(static_cast<uint64_t>(*it));
    o.scalar<uint32_t>(ggml_type_code(t.data.dtype));
    o.scalar<uint64_t>(offsets[k]);
  }
  o.pad_to(alignment);
  const uint64_t data_start = o.pos;
  for (size_t k = 0; k < tensors.size(); ++k) {
    o.pad_to(alignment);
    GPS_ASSERT(o.pos - data_start == offsets[k], "write_gguf: offset bookkeeping");
    o.raw(tensors[k].data.bytes.data(), tensors[k].data.bytes.size());
  }
  o.pad_to(alignment);  // as gguf-py does: the last tensor is padded too
  const bool flushed = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  if (std::fclose(f) != 0 || !o.ok || !flushed) {
    std::remove(tmp.c_str());
    return io_error(tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return io_error(path + ": rename failed: " + std::strerror(e));
  }
  return {};
}

}  // namespace gpstream::io
