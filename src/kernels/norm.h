// RMSNorm: out = x / sqrt(mean(x²) + eps) * (weight + weight_offset), in fp32. weight_offset is 0 for
// llama/qwen2 and 1 for Gemma's (1 + w) form.
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// out, x: [n_tok, n] (row strides ldo, ldx; out may alias x); weight: [n].
void rmsnorm_forward(float* out, int64_t ldo, const float* x, int64_t ldx, const float* weight, int64_t n_tok,
                     int64_t n, float eps, float weight_offset = 0.0f);

}  // namespace gpstream::kernels
