// GGUF's block-quantized weight formats, byte for byte as llama.cpp stores them (little-endian):
//   Q8_0  32 weights in 34 bytes: fp16 scale d, 32 int8 q;          w = d * q
//   Q4_0  32 weights in 18 bytes: fp16 scale d, 16 bytes of nibbles; byte j holds weight j in its low
//         nibble and weight j + 16 in its high nibble;               w = d * (nibble - 8)
//   Q4_K  256 weights in 144 bytes, Q6_K 256 weights in 210 bytes (read only: dequantized at load).
// Scalar quantize / dequantize routines here define the formats; the AVX2 dot products are quant_dot.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpstream::kernels {

constexpr int64_t kQ8_0Block = 32;  // weights per Q8_0 / Q4_0 block
constexpr size_t kQ8_0Bytes = 34;
constexpr size_t kQ4_0Bytes = 18;
constexpr int64_t kKQuantBlock = 256;  // weights per Q4_K / Q6_K super-block
constexpr size_t kQ4_KBytes = 144;
constexpr size_t kQ6_KBytes = 210;

struct BlockQ8_0 {
  uint16_t d;  // fp16
  int8_t qs[32];
};
struct BlockQ4_0 {
  uint16_t d;  // fp16
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ8_0) == kQ8_0Bytes && sizeof(BlockQ4_0) == kQ4_0Bytes);

// Quantize n floats (n % 32 == 0) into n / 32 blocks, as llama.cpp's reference quantizer does:
// Q8_0: d = max|x| / 127, q = round-half-away(x / d). Q4_0: m = the x of largest magnitude (first one on
// ties), d = m / -8, nibble = min(15, trunc(x / d + 8.5)).
void quantize_row_q8_0(const float* x, BlockQ8_0* out, int64_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* out, int64_t n);
// Inverse: n floats (n % block == 0) from the blocks at `blocks`.
void dequantize_row_q8_0(const void* blocks, float* out, int64_t n);
void dequantize_row_q4_0(const void* blocks, float* out, int64_t n);
void dequantize_row_q4_k(const void* blocks, float* out, int64_t n);
void dequantize_row_q6_k(const void* blocks, float* out, int64_t n);

}  // namespace gpstream::kernels
