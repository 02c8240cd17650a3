// Repacks quantized weight matrices once, at load, into the layouts the fastest kernels read: every Q8_0 /
// Q4_0 layer matrix (and an untied LM head) whose rows are a multiple of eight is interleaved in groups of eight
// rows (kernels/quant_dot.h) into one huge-page buffer, Weights::repacked, and its view is repointed there.
// The token-embedding table is never repacked (the lookup reads single rows), nor a head tied to it.
// When the storage's bytes are reachable only through these Weights, the pages of the replaced matrices are
// handed back, so a repacked model takes no more memory than the file.
#pragma once

#include "model/weights.h"

namespace gpstream::model {

// Repacks w as above; returns how many matrices were repacked. Nothing is repacked when the environment
// variable GPSTREAM_REPACK is 0 (for comparisons) or when the memory budget refuses the copy.
int repack_weights_for_kernels(Weights& w);

}  // namespace gpstream::model
