// Whole-model precision conversion (see quantize_model.h).
#include "model/quantize_model.h"

#include <cstring>

#include "kernels/quant_blocks.h"
#include "model/gguf_model.h"
#include "model/tensor_names.h"
#include "util/half.h"

namespace gpstream::model {
namespace {

std::vector<std::byte> encode(const std::vector<float>& v, int64_t cols, io::DType t) {
  std::vector<std::byte> out;
  const auto n = static_cast<int64_t>(v.size());
  switch (t) {
    case io::DType::F32:
      out.resize(v.size() * 4);
      std::memcpy(out.data(), v.data(), out.size());
      break;
    case io::DType::F16:
    case io::DType::BF16:
      out.resize(v.size() * 2);
      for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t h = t == io::DType::F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    case io::DType::Q8_0:
      out.resize(static_cast<size_t>(n / 32) * kernels::kQ8_0Bytes);
      for (int64_t r = 0; r < n / cols; ++r)
        kernels::quantize_row_q8_0(v.data() + r * cols,
                                   reinterpret_cast<kernels::BlockQ8_0*>(out.data()) + r * (cols / 32), cols);
      break;
    case io::DType::Q4_0:
      out.resize(static_cast<size_t>(n / 32) * kernels::kQ4_0Bytes);
      for (int64_t r = 0; r < n / cols; ++r)
        kernels::quantize_row_q4_0(v.data() + r * cols,
                                   reinterpret_cast<kernels::BlockQ4_0*>(out.data()) + r * (cols / 32), cols);
      break;
    case io::DType::Q4_K:
    case io::DType::Q6_K:
      break;  // never a target
  }
  return out;
}

}  // namespace

Result<io::DType> parse_storage_type(const std::string& name) {
  if (name == "f32") return io::DType::F32;
  if (name == "f16") return io::DType::F16;
  if (name == "bf16") return io::DType::BF16;
  if (name == "q8_0") return io::DType::Q8_0;
  if (name == "q4_0") return io::DType::Q4_0;
  return invalid_argument("type '" + name + "' is not one of f32, f16, bf16, q8_0, q4_0");
}

int gguf_file_type(io::DType t) {
  switch (t) {
    case io::DType::F32:
      return 0;
    case io::DType::F16:
      return 1;
    case io::DType::BF16:
      return 32;
    case io::DType::Q8_0:
      return 7;
    case io::DType::Q4_0:
      return 2;
    case io::DType::Q4_K:
      return 15;  // mostly Q4_K_M
    case io::DType::Q6_K:
      return 18;
  }
  return 0;
}

io::TensorMap convert_model_tensors(const ModelConfig& config, const io::TensorMap& hf, io::DType target) {
  (void)config;
  io::TensorMap out;
  out.metadata = hf.metadata;
  for (const auto& [name, t] : hf.tensors) {
    io::DType type = io::DType::F32;
    if (t.shape.size() == 2) {
      type = target;
      if (io::dtype_is_quantized(target)) {
        const auto id = tensor_id_from_hf(name);
        const bool embedding = id && (id->first == TensorId::TokEmbd || id->first == TensorId::Output);
        if (target == io::DType::Q4_0 && embedding) type = io::DType::Q8_0;
        // Rows that are not whole blocks stay F32 (llama.cpp would round the activations of an F16 matrix to
        // F16, gpstream keeps them in F32: F32 weights compute the same in both engines).
        if (t.shape[1] % 32 != 0) type = io::DType::F32;
      }
    }
    if (type == t.dtype) {
      out.tensors[name] = t;
      continue;
    }
    const std::vector<float> v = dequantize_tensor(t);
    out.add_raw(name, type, t.shape, encode(v, t.shape.empty() ? 1 : t.shape.back(), type));
  }
  out.owners.insert(out.owners.end(), hf.owners.begin(), hf.owners.end());
  return out;
}

}  // namespace gpstream::model
