// Named tensors as stored in model files: dtype, shape and a view of the raw bytes. The bytes live in
// a memory-mapped file or an owned buffer kept alive by the TensorMap that holds the view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/error.h"

namespace gpstream::io {

// F32/F16/BF16: plain elements. Q8_0/Q4_0/Q4_K/Q6_K: GGUF's block-quantized formats, blocks along the
// innermost (last) dimension; io only moves their bytes (kernels/quant_blocks.h defines them).
enum class DType { F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K };

bool dtype_is_quantized(DType t);
// Elements per block (1 for plain types) and bytes per block (the element size for plain types).
int64_t dtype_block_elems(DType t);
size_t dtype_block_bytes(DType t);
// Bytes per element of a plain type (asserts on quantized types: use tensor_nbytes).
size_t dtype_size(DType t);
const char* dtype_name(DType t);  // safetensors / GGUF spelling: "F32", "F16", "BF16", "Q8_0", ...
// Bytes of a tensor of this shape; nullopt when the innermost dimension is not a whole number of blocks or
// the size overflows 2^62.
std::optional<uint64_t> tensor_nbytes(DType t, const std::vector<int64_t>& shape);

struct TensorData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;

  int64_t numel() const;
  std::string shape_string() const;  // "[896, 151936]"
};

// A set of named tensors plus whatever keeps their bytes alive (mapped files, buffers).
struct TensorMap {
  std::map<std::string, TensorData> tensors;
  std::vector<std::shared_ptr<const void>> owners;
  std::map<std::string, std::string> metadata;  // safetensors "__metadata__"

  const TensorData* find(const std::string& name) const;
  // Adds an fp32 tensor whose bytes this map owns (tests, trainers, conversions).
  void add_f32(const std::string& name, std::vector<int64_t> shape, std::vector<float> values);
  // Adds a tensor of any dtype from raw little-endian bytes, owned by this map.
  void add_raw(const std::string& name, DType dtype, std::vector<int64_t> shape,
               std::vector<std::byte> bytes);
};

// Reads element i of a tensor as fp32 (slow path: tests and small vectors). Plain dtypes only (asserts):
// quantized tensors are dequantized by the layers above (model::dequantize_tensor).
float tensor_get(const TensorData& t, int64_t i);
// Converts a whole tensor to fp32.
std::vector<float> tensor_to_f32(const TensorData& t);

}  // namespace gpstream::io
