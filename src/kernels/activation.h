// Gated MLP activations: SiLU-gated (llama, qwen2) and tanh-GELU-gated (Gemma).
#pragma once

#include <cstdint>

#include "kernels/gelu.h"

namespace gpstream::kernels {

enum class Activation { Silu, GeluTanh };

// out[t, i] = act(gate[t, i]) * up[t, i]; gate and up are [n_tok, n] with row stride ld (out may alias gate).
void gated_act_forward(float* out, int64_t ldo, const float* gate, const float* up, int64_t ld, int64_t n_tok,
                       int64_t n, Activation act);

float silu(float x);  // gelu_tanh: kernels/gelu.h

}  // namespace gpstream::kernels
