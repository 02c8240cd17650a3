// Backward of the gated MLP activation out = act(gate) · up (activation.h):
//   dgate = dout · up · act'(gate),  dup = dout · act(gate)
// SiLU: act'(g) = σ(g)(1 + g(1 − σ(g))). tanh-GELU: derivative of 0.5 g (1 + tanh(√(2/π)(g + 0.044715 g³))).
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace gpstream::kernels {

// dgate, dup: [n_tok, n] (stride ld), overwritten (they may alias gate / up: each element is read
// before it is written); dout: [n_tok, n] (stride lddo).
void gated_act_backward(float* dgate, float* dup, const float* dout, int64_t lddo, const float* gate,
                        const float* up, int64_t ld, int64_t n_tok, int64_t n, Activation act);

}  // namespace gpstream::kernels
