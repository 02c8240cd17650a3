// Tensor views and the owning TensorMap.
#include "io/tensor.h"

#include <cstring>

#include "util/half.h"

namespace gpstream::io {

bool dtype_is_quantized(DType t) {
  return dtype_block_elems(t) > 1;
}

int64_t dtype_block_elems(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return 1;
    case DType::Q8_0:
    case DType::Q4_0:
      return 32;
    case DType::Q4_K:
    case DType::Q6_K:
      return 256;
  }
  return 1;
}

size_t dtype_block_bytes(DType t) {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::Q8_0:
      return 34;
    case DType::Q4_0:
      return 18;
    case DType::Q4_K:
      return 144;
    case DType::Q6_K:
      return 210;
  }
  return 0;
}

size_t dtype_size(DType t) {
  GPS_ASSERT(!dtype_is_quantized(t), "dtype_size of a block-quantized dtype");
  return dtype_block_bytes(t);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::Q8_0:
      return "Q8_0";
    case DType::Q4_0:
      return "Q4_0";
    case DType::Q4_K:
      return "Q4_K";
    case DType::Q6_K:
      return "Q6_K";
  }
  return "?";
}

std::optional<uint64_t> tensor_nbytes(DType t, const std::vector<int64_t>& shape) {
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const auto ud = static_cast<uint64_t>(d);
    if (ud != 0 && n > kLimit / ud) return std::nullopt;
    n *= ud;
  }
  const auto block = static_cast<uint64_t>(dtype_block_elems(t));
  if (block > 1 && (shape.empty() || static_cast<uint64_t>(shape.back()) % block != 0)) return std::nullopt;
  const uint64_t blocks = n / block;
  if (blocks > kLimit / dtype_block_bytes(t)) return std::nullopt;
  return blocks * dtype_block_bytes(t);
}

int64_t TensorData::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorData::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const TensorData* TensorMap::find(const std::string& name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

void TensorMap::add_f32(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
  auto buf = std::make_shared<std::vector<float>>(std::move(values));
  TensorData t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.bytes = std::as_bytes(std::span<const float>(*buf));
  GPS_ASSERT(static_cast<size_t>(t.numel()) == buf->size(), "add_f32: shape does not match value count");
  tensors[name] = t;
  owners.push_back(buf);
}

void TensorMap::add_raw(const std::string& name, DType dtype, std::vector<int64_t> shape,
                        std::vector<std::byte> bytes) {
  auto buf = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  TensorData t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes = std::span<const std::byte>(*buf);
  const auto want = tensor_nbytes(dtype, t.shape);
  GPS_ASSERT(want && *want == buf->size(), "add_raw: size mismatch");
  tensors[name] = t;
  owners.push_back(buf);
}

float tensor_get(const TensorData& t, int64_t i) {
  GPS_ASSERT(!dtype_is_quantized(t.dtype), "tensor_get on a block-quantized tensor");
  const std::byte* p = t.bytes.data() + static_cast<size_t>(i) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return f16_to_f32(h);
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_f32(h);
    }
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q6_K:
      break;
  }
  return 0.0f;
}

std::vector<float> tensor_to_f32(const TensorData& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = tensor_get(t, static_cast<int64_t>(i));
  return out;
}

}  // namespace gpstream::io
