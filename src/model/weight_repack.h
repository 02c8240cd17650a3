// Repacks weight matrices once, at load, into the layouts the fastest kernels read, all into one huge-page
// buffer (Weights::repacked), with the views repointed there:
//  - every Q8_0 / Q4_0 layer matrix (and an untied LM head) whose rows are a multiple of eight is interleaved
//    in groups of eight rows (kernels/quant_dot.h);
//  - every BF16 layer matrix and the BF16 LM head whose rows are a multiple of sixteen goes into panels of
//    sixteen rows (kernels/bf16_panels.h). A BF16 head tied to the token embedding gets a paneled copy: it
//    is about a quarter of a small model's multiply-adds in every batched round, and the plain table stays
//    for the lookups.
// The token-embedding table itself is never repacked (the lookup reads single rows), nor a quantized head
// tied to it. When the storage's bytes are reachable only through these Weights, the pages of the replaced
// matrices are handed back, so a repacked model takes no more memory than the file (plus a tied head's copy).
#pragma once

#include "model/weights.h"

namespace gpstream::model {

// Repacks w as above; returns how many matrices were repacked. Nothing is repacked when the environment
// variable GPSTREAM_REPACK is 0 (for comparisons) or when the memory budget refuses the copy.
int repack_weights_for_kernels(Weights& w);

}  // namespace gpstream::model
