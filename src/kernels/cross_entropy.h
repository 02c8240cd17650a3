// Cross-entropy of softmax(logits) against target ids, row by row (the LM loss), and its gradient:
//   loss_r = logsumexp(z_r) − z_r[y_r],   dz_r = scale · (softmax(z_r) − onehot(y_r))
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// losses: [n_rows]; logits: [n_rows, n_vocab]; targets in [0, n_vocab).
void cross_entropy_forward(float* losses, const float* logits, const int32_t* targets, int64_t n_rows,
                           int64_t n_vocab);

// dlogits may alias logits (the usual case: the logits buffer becomes the gradient).
void cross_entropy_backward(float* dlogits, const float* logits, const int32_t* targets, int64_t n_rows,
                            int64_t n_vocab, float scale);

}  // namespace gpstream::kernels
