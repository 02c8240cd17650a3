// Repacks weight matrices once, at load, into the layouts the fastest kernels read, all into one huge-page
// buffer (Weights::repacked), with the views repointed there:
//  - every Q8_0 / Q4_0 layer matrix and LM head whose rows are a multiple of eight is interleaved in groups
//    of eight rows (kernels/quant_dot.h);
//  - every BF16 layer matrix and LM head whose rows are a multiple of sixteen goes into panels of sixteen
//    rows (kernels/bf16_panels.h).
// A head tied to the token embedding gets a repacked copy: it is about a quarter of a small model's
// multiply-adds in every batched round, and the plain table stays for the lookups (which read single rows,
// so the embedding table itself is never repacked). When the storage's bytes are reachable only through
// these Weights, the pages of the replaced matrices are handed back, so a repacked model takes no more
// memory than the file (plus a tied head's copy).
#pragma once

#include "model/weights.h"

namespace gpstream::model {

// Repacks w as above; returns how many matrices were repacked. Nothing is repacked when the environment
// variable GPSTREAM_REPACK is 0 (for comparisons) or when the memory budget refuses the copy.
int repack_weights_for_kernels(Weights& w);

}  // namespace gpstream::model
