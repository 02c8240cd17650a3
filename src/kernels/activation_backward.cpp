// Gated activation backward, eight lanes at a time with AVX2 (fast_exp8 for the sigmoids; a row's tail goes
// through the same lanes, padded), so the body and the tail of a row compute alike.
#include "kernels/activation_backward.h"

#include <algorithm>

#include "kernels/fast_exp.h"

namespace gpstream::kernels {

namespace {

#if defined(__AVX2__) && defined(__FMA__)
// dgate = dout · up · act'(gate), dup = dout · act(gate) for eight values.
void gated_backward8(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                     Activation act) {
  const __m256 g = _mm256_loadu_ps(gate), u = _mm256_loadu_ps(up), d = _mm256_loadu_ps(dout);
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 a, da;
  if (act == Activation::Silu) {
    const __m256 s = _mm256_div_ps(one, _mm256_add_ps(one, fast_exp8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    a = _mm256_mul_ps(g, s);
    da = _mm256_mul_ps(s, _mm256_fmadd_ps(g, _mm256_sub_ps(one, s), one));  // s (1 + g (1 - s))
  } else {
    const __m256 s = gelu_sigmoid8(g);
    a = _mm256_mul_ps(g, s);
    da = gelu_slope8(g, s);
  }
  _mm256_storeu_ps(dgate, _mm256_mul_ps(_mm256_mul_ps(d, u), da));
  _mm256_storeu_ps(dup, _mm256_mul_ps(d, a));
}
#endif

}  // namespace

void gated_act_backward(float* dgate, float* dup, const float* dout, int64_t lddo, const float* gate,
                        const float* up, int64_t ld, int64_t n_tok, int64_t n, Activation act) {
  for (int64_t t = 0; t < n_tok; ++t) {
    float* dg = dgate + t * ld;
    float* du = dup + t * ld;
    const float* d = dout + t * lddo;
    const float* g = gate + t * ld;
    const float* u = up + t * ld;
    int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
    for (; i + 8 <= n; i += 8) gated_backward8(dg + i, du + i, d + i, g + i, u + i, act);
    if (i < n) {
      // The tail through the same lanes: copies padded with zeros (act(0) = 0, no NaN).
      float pg[8] = {}, pu[8] = {}, pd[8] = {}, og[8], ou[8];
      const auto rest = static_cast<size_t>(n - i);
      std::copy_n(g + i, rest, pg);
      std::copy_n(u + i, rest, pu);
      std::copy_n(d + i, rest, pd);
      gated_backward8(og, ou, pd, pg, pu, act);
      std::copy_n(og, rest, dg + i);
      std::copy_n(ou, rest, du + i);
    }
#else
    for (; i < n; ++i) {
      float a, da;
      if (act == Activation::Silu) {
        const float s = 1.0f / (1.0f + fast_exp(-g[i]));
        a = g[i] * s;
        da = s * (1.0f + g[i] * (1.0f - s));
      } else {
        a = gelu_tanh(g[i]);
        da = gelu_tanh_grad(g[i]);
      }
      const float di = d[i], ui = u[i];
      dg[i] = di * ui * da;
      du[i] = di * a;
    }
#endif
  }
}

}  // namespace gpstream::kernels
