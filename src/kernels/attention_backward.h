// Training attention over one whole sequence: the forward keeps the softmax probabilities for the
// backward. The mask is dense and additive ([n_tok, n_tok], 0 = visible, -inf = hidden), built once per
// sequence from the structured spec (gpe.md §4, §6: each row sees the first n_src source rows and the
// first n_tgt target rows), so every product is a GEMM rather than per-token dot products:
//   S = scale · q kᵀ,  C = cap·tanh(S/cap) (soft-cap, Gemma 2; C = S without),  P = softmax_rows(C + mask)
//   dP = dout vᵀ,  dC = P ⊙ (dP − rowsum(P ⊙ dP)),  dS = dC ⊙ (1 − tanh²(S/cap)),  dq += scale · dS k,  dk +=
//   scale · dSᵀ q,  dv += Pᵀ dout
// One call handles one query head; grouped-query callers pass the shared key/value head's columns.
// A row that sees nothing gets P = 0 and out = 0 (as attention_forward_token). row_end (optional) gives,
// per row, one past its last visible key; rows are processed in blocks and each block's products stop at
// the block's largest row_end, so causal-like layouts (every paradigm's training layout: a row never sees
// a row that arrives after it) cost about half of the full T×T. Columns past a block's end are not written.
#pragma once

#include <cstdint>

namespace gpstream::kernels {

// mask: [n_tok, n_tok]. groups[j] = 0 for a source row, 1 for a target row (tokens in cache order);
// row i sees j iff rank of j in its group < n_src[i] (source) or < n_tgt[i] (target). A sliding window
// w > 0 (docs/models.md, sliding windows) also hides, in each group, the rows before the last w of the
// visible prefix: rank >= n_src[i] - w (source), rank >= n_tgt[i] - w (target).
void attention_mask_build(float* mask, const uint8_t* groups, const int32_t* n_src, const int32_t* n_tgt,
                          int64_t n_tok, int64_t window = 0);
// row_end[i] = 1 + the last j with mask[i][j] visible (0 if none).
void attention_row_end(int32_t* row_end, const float* mask, int64_t n_tok);

// out: [n_tok, head_dim] (stride ldo); probs: [n_tok, n_tok]; q: stride ldq; k, v: stride ldkv.
void attention_forward_seq(float* out, int64_t ldo, float* probs, const float* q, int64_t ldq, const float* k,
                           const float* v, int64_t ldkv, const float* mask, int64_t n_tok, int64_t head_dim,
                           float scale, const int32_t* row_end = nullptr, float softcap = 0.0f);

// dq, dk, dv accumulate (strides lddq, lddkv); scratch: [n_tok, n_tok], twice that with a soft-cap.
void attention_backward_seq(float* dq, int64_t lddq, float* dk, float* dv, int64_t lddkv, float* scratch,
                            const float* dout, int64_t lddo, const float* probs, const float* q, int64_t ldq,
                            const float* k, const float* v, int64_t ldkv, int64_t n_tok, int64_t head_dim,
                            float scale, const int32_t* row_end = nullptr, float softcap = 0.0f);

// Double-precision loops over the same arguments (oracle; probs may be null).
void attention_forward_seq_ref(float* out, int64_t ldo, float* probs, const float* q, int64_t ldq,
                               const float* k, const float* v, int64_t ldkv, const float* mask, int64_t n_tok,
                               int64_t head_dim, float scale, float softcap = 0.0f);

}  // namespace gpstream::kernels
