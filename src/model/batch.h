// Batch: the tokens of one forward pass, possibly from several sequences (streams). Each token carries
// a float position (φ may be 0.5), its sequence, its group (source or target region of that
// sequence's KvCache) and its visibility: how many rows of the source region and of the target region
// it attends to, counted after this batch's rows are appended (regions fill in batch order). That pair
// expresses every paradigm of gpe.md §6 and the training mask of §4 — no dense mask, no paradigm code.
#pragma once

#include <cstdint>
#include <vector>

#include "model/kv_cache.h"

namespace gpstream::model {

struct BatchToken {
  int32_t id = 0;          // token id (ignored when the batch carries embeddings)
  float pos = 0.0f;        // RoPE position
  int seq = 0;             // index into the caches passed to forward()
  Group group = Group::Source;
  int n_src = 0;           // visible source rows
  int n_tgt = 0;           // visible target rows
  bool logits = false;     // compute this row's logits
};

struct Batch {
  std::vector<BatchToken> tokens;
  // Optional input embeddings [n_tok, n_embd] used instead of token ids (speech frames).
  const float* embeddings = nullptr;

  // Appends a token; returns its index.
  int add(int32_t id, float pos, int seq, Group group, int n_src, int n_tgt, bool logits = false) {
    tokens.push_back({id, pos, seq, group, n_src, n_tgt, logits});
    return static_cast<int>(tokens.size()) - 1;
  }
  int size() const { return static_cast<int>(tokens.size()); }
  int n_logits() const {
    int n = 0;
    for (const auto& t : tokens) n += t.logits;
    return n;
  }
};

}  // namespace gpstream::model
