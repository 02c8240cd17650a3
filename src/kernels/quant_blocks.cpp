// Scalar quantization and dequantization of GGUF blocks (the definition of each format).
#include "kernels/quant_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/half.h"

namespace gpstream::kernels {
namespace {

uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

}  // namespace

void quantize_row_q8_0(const float* x, BlockQ8_0* out, int64_t n) {
  for (int64_t b = 0; b < n / kQ8_0Block; ++b, x += kQ8_0Block) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = f32_to_f16(d);
    // x * id lies in [-127, 127] (clamped so NaN or inf inputs stay defined).
    for (int j = 0; j < 32; ++j)
      out[b].qs[j] = static_cast<int8_t>(std::round(std::clamp(x[j] * id, -127.0f, 127.0f)));
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* out, int64_t n) {
  for (int64_t b = 0; b < n / kQ8_0Block; ++b, x += kQ8_0Block) {
    float amax = 0.0f, m = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        m = x[j];
      }
    }
    const float d = m / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = f32_to_f16(d);
    for (int j = 0; j < 16; ++j) {
      // x * id lies in [-8, 8]: x + 8.5 in [0.5, 16.5], truncated then capped at 15. One fused multiply-add,
      // written out: left to the compiler, x * id + 8.5f is fused at -O2 and rounded twice at -O1, and the
      // quantized file would depend on the build.
      const int lo = static_cast<int>(std::clamp(std::fma(x[j], id, 8.5f), 0.0f, 15.0f));
      const int hi = static_cast<int>(std::clamp(std::fma(x[j + 16], id, 8.5f), 0.0f, 15.0f));
      out[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void dequantize_row_q8_0(const void* blocks, float* out, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(blocks);
  for (int64_t b = 0; b < n / kQ8_0Block; ++b, p += kQ8_0Bytes, out += 32) {
    const float d = f16_to_f32(load_u16(p));
    for (int j = 0; j < 32; ++j) out[j] = d * static_cast<float>(static_cast<int8_t>(p[2 + j]));
  }
}

void dequantize_row_q4_0(const void* blocks, float* out, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(blocks);
  for (int64_t b = 0; b < n / kQ8_0Block; ++b, p += kQ4_0Bytes, out += 32) {
    const float d = f16_to_f32(load_u16(p));
    for (int j = 0; j < 16; ++j) {
      out[j] = d * static_cast<float>((p[2 + j] & 0x0f) - 8);
      out[j + 16] = d * static_cast<float>((p[2 + j] >> 4) - 8);
    }
  }
}

// Q4_K super-block: fp16 d, fp16 dmin, 12 bytes packing eight 6-bit (scale, min) pairs, 128 bytes of
// nibbles. Sub-block s (32 weights) is w = d * scale_s * q - dmin * min_s. Pairs 0-3 are the low 6 bits
// of bytes 0-3 (scales) and 4-7 (mins); pairs 4-7 take their low 4 bits from bytes 8-11 (scale: low
// nibble, min: high nibble) and their top 2 bits from the top 2 bits of bytes 0-3 (scales) and 4-7 (mins).
// The nibbles come in 4 groups of 32 bytes: the low nibbles are sub-block 2g, the high ones 2g + 1.
void dequantize_row_q4_k(const void* blocks, float* out, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(blocks);
  for (int64_t b = 0; b < n / kKQuantBlock; ++b, p += kQ4_KBytes) {
    const float d = f16_to_f32(load_u16(p)), dmin = f16_to_f32(load_u16(p + 2));
    const uint8_t* sc = p + 4;
    const uint8_t* q = p + 16;
    auto scale_min = [sc](int s, int& scale, int& min) {
      if (s < 4) {
        scale = sc[s] & 63;
        min = sc[s + 4] & 63;
      } else {
        scale = (sc[s + 4] & 0x0f) | ((sc[s - 4] >> 6) << 4);
        min = (sc[s + 4] >> 4) | ((sc[s] >> 6) << 4);
      }
    };
    for (int g = 0; g < 4; ++g, q += 32) {
      int s0, m0, s1, m1;
      scale_min(2 * g, s0, m0);
      scale_min(2 * g + 1, s1, m1);
      const float d0 = d * static_cast<float>(s0), min0 = dmin * static_cast<float>(m0);
      const float d1 = d * static_cast<float>(s1), min1 = dmin * static_cast<float>(m1);
      for (int l = 0; l < 32; ++l) *out++ = d0 * static_cast<float>(q[l] & 0x0f) - min0;
      for (int l = 0; l < 32; ++l) *out++ = d1 * static_cast<float>(q[l] >> 4) - min1;
    }
  }
}

// Q6_K super-block: 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits), 16 int8 scales (one per 16
// weights), fp16 d; w = d * scale * (q - 32). Each half of 128 weights uses 64 ql bytes, 32 qh bytes and
// 8 scales: weight l + 32k (l < 32, k < 4) takes ql[l + 32 (k & 1)]'s low (k < 2) or high (k >= 2) nibble and
// bits 2k..2k+1 of qh[l]; its scale is scales[l / 16 + 2k].
void dequantize_row_q6_k(const void* blocks, float* out, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(blocks);
  for (int64_t b = 0; b < n / kKQuantBlock; ++b, p += kQ6_KBytes) {
    const uint8_t* ql = p;
    const uint8_t* qh = p + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(p + 192);
    const float d = f16_to_f32(load_u16(p + 208));
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, out += 128) {
      for (int l = 0; l < 32; ++l) {
        for (int k = 0; k < 4; ++k) {
          const int lo = k < 2 ? (ql[l + 32 * (k & 1)] & 0x0f) : (ql[l + 32 * (k & 1)] >> 4);
          const int q = (lo | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
          out[l + 32 * k] = d * static_cast<float>(sc[l / 16 + 2 * k]) * static_cast<float>(q);
        }
      }
    }
  }
}

}  // namespace gpstream::kernels
