// Connectionist temporal classification (Graves et al., 2006): the loss −log p(labels | x) of one sequence
// and its gradient w.r.t. the unnormalised scores, by the forward–backward recursions in log space (double).
// Frame t emits a symbol of the alphabet [0, V) with probability softmax(logits[t]); symbol 0 is the blank;
// a frame path maps to a label sequence by merging repeats and then dropping blanks. Used as an auxiliary
// loss on the speech encoder (speech/speech_trainer.h).
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// logits [T, V] row-major; labels [L], each in [1, V). Returns −log p(labels | logits), or +infinity when
// no path of T frames can emit the labels (then dlogits is zero). If dlogits is not null it receives
// scale · d(loss)/d(logits) = scale · (softmax − γ), γ_t(k) = posterior of emitting k at frame t.
double ctc_loss(float* dlogits, const float* logits, int64_t T, int64_t V, const int32_t* labels, int64_t L,
                float scale);

}  // namespace gpstream::kernels
