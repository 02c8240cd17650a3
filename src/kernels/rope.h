// Rotary position embedding, rotate-half form (as Hugging Face's apply_rotary_pos_emb), with REAL-VALUED
// positions: the angle of frequency i at position p is p * inv_freq[i], computed in double, so φ = 0.5
// and restarting target groups are exact. For a head vector x of size d = 2h:
//   out[i]     = x[i] cos θ_i − x[i+h] sin θ_i
//   out[i + h] = x[i+h] cos θ_i + x[i] sin θ_i
// Rotation composes, so moving a cached key from position p to p' is rope_apply with angle (p'−p)·inv_freq.
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// cos_out, sin_out: [n_tok, half]; angle = positions[t] * inv_freq[i]; scale multiplies both (HF's
// attention_scaling, 1 for default and llama3 rope).
void rope_table(float* cos_out, float* sin_out, const float* positions, const float* inv_freq, int64_t n_tok,
                int64_t half, float scale = 1.0f);

// Rotates x in place: x is [n_tok, n_heads, head_dim] with row stride ld (floats between tokens).
// Only the first rot_dim dims of each head rotate (partial rotary, Phi-3's partial_rotary_factor; 0 means
// head_dim); the rest pass through. cos/sin: [n_tok, rot_dim/2]. Pass sign = -1 to apply the inverse
// rotation (backward pass).
void rope_apply(float* x, int64_t ld, const float* cos_t, const float* sin_t, int64_t n_tok, int64_t n_heads,
                int64_t head_dim, float sign = 1.0f, int64_t rot_dim = 0);

}  // namespace gpstream::kernels
