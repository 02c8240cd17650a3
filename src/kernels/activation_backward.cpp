// Gated activation backward.
#include "kernels/activation_backward.h"

#include <cmath>

namespace gpstream::kernels {

float silu_grad(float x) {
  const float s = 1.0f / (1.0f + std::exp(-x));
  return s * (1.0f + x * (1.0f - s));
}

void gated_act_backward(float* dgate, float* dup, const float* dout, int64_t lddo, const float* gate,
                        const float* up, int64_t ld, int64_t n_tok, int64_t n, Activation act) {
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t i = 0; i < n; ++i) {
      const float g = gate[t * ld + i], u = up[t * ld + i], d = dout[t * lddo + i];
      float a, da;
      if (act == Activation::Silu) {
        const float s = 1.0f / (1.0f + std::exp(-g));
        a = g * s;
        da = s * (1.0f + g * (1.0f - s));
      } else {
        a = gelu_tanh(g);
        da = gelu_tanh_grad(g);
      }
      dgate[t * ld + i] = d * u * da;
      dup[t * ld + i] = d * a;
    }
  }
}

}  // namespace gpstream::kernels
